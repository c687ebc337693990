#!/usr/bin/env bash
# Issue 60: how much of a launch no block runs, by launch configuration (launch_overhead.py's docstring says what
# each variant is): the stamping run under nsys, then the export read beside the stamps. Run from the repository
# root with .devkit carried; launch-overhead.json and its printout come back.
source benchmarks/gpu/record_start.sh
timeout 200 nsys profile -t cuda --export sqlite -o /tmp/lo -f true \
  python3 benchmarks/gpu/experiments/launch_overhead.py --launches ${LAUNCHES:-200} --out "$OUT/launch-overhead.json" \
  > "$OUT/launch-overhead-run.txt" 2>&1
echo "run exit $? ($((SECONDS - START)) s)"; tail -3 "$OUT/launch-overhead-run.txt"
python3 benchmarks/gpu/experiments/launch_overhead.py --read /tmp/lo.sqlite --out "$OUT/launch-overhead.json" \
  | tee "$OUT/launch-overhead.txt"
cp "$OUT/launch-overhead.json" "$OUT/launch-overhead.txt" "$OUT/host.txt" "$FINAL/"
