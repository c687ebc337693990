#!/usr/bin/env bash
# Issue 33's probes of 2026-11-26 (afternoon): whether a host-to-device copy fills its buffer front to back
# (benchmarks/gpu/experiments/copy_landing.py), and h6 in clusters of two with TMA stores of C, paired with
# h6 as declared and torch.mm (h6_cl2_tma.py). Run from the repository root with .devkit carried; one
# archive, results.tgz, comes back in $OUT.
source benchmarks/gpu/record_start.sh
timeout 60 python3 benchmarks/gpu/experiments/copy_landing.py --out "$OUT/copy-landing.jsonl" > "$OUT/copy-landing.txt" 2>&1
echo "copy landing exit $? ($((SECONDS - START)) s)"; cat "$OUT/copy-landing.txt" | cut -c1-250
for run in 1 2; do
  timeout 200 python3 benchmarks/gpu/experiments/h6_cl2_tma.py --out "$OUT/h6-cl2-tma-run$run.jsonl" --rounds 3 \
    > "$OUT/h6-cl2-tma-run$run.txt" 2>&1
  echo "cl2 tma run $run exit $? ($((SECONDS - START)) s)"; grep -E "ok=False|message|paired" "$OUT/h6-cl2-tma-run$run.txt" | cut -c1-250
done
tar czf "$FINAL/results.tgz" -C "$OUT" . ; echo "total $((SECONDS - START)) s"
