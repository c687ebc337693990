#!/usr/bin/env bash
# Issue 33's 1024^3 flow handed over by words in device memory (benchmarks/gpu/experiments/flag_flow.py):
# verified and timed beside the bus alone and cuBLAS's event-linked row-block flows, in interleaved rounds,
# in two processes (ONLY: a regular expression of the flows to run); with PIPELINE=1 also `nsprof pipeline --size 1024 --no-cold --no-nsys` (the CLI's own
# numbers on the same machine); then a few flows under nsys (their timeline, as flag-flow.sqlite.xz).
# Run from the repository root with .devkit carried; results.tgz and the capture come back in $OUT.
source benchmarks/gpu/record_start.sh
for run in 1 2; do
  timeout 150 python3 benchmarks/gpu/experiments/flag_flow.py --out "$OUT/flag-flow-run$run.jsonl" --rounds ${ROUNDS:-4} --only "${ONLY:-}" \
    > "$OUT/flag-flow-run$run.txt" 2>&1
  echo "flag flow run $run exit $? ($((SECONDS - START)) s)"
done
grep -h '"ok": false' "$OUT"/flag-flow-run*.jsonl | cut -c1-300
cat "$OUT"/flag-flow-run*.jsonl | python3 -c "
import json,sys,collections
r=collections.defaultdict(list)
for l in sys.stdin:
    d=json.loads(l)
    if d['phase']=='time': r[(d['flow'],d['kind'])].append(d['median_ms'])
for k,v in r.items(): print(f'{k[0]:<44} {k[1]:<8} {min(v):.4f}-{max(v):.4f} ms ({len(v)})')"
if [ "${PIPELINE:-0}" = 1 ]; then
  timeout 120 python3 -m nsprof pipeline --size 1024 --no-cold --no-nsys > "$OUT/pipeline-1024.txt" 2>&1
  echo "pipeline exit $? ($((SECONDS - START)) s)"; tail -n 20 "$OUT/pipeline-1024.txt"
fi
if [ "${NSYS:-1}" = 1 ]; then
  timeout 150 nsys profile -t cuda,nvtx -o "$OUT/flag-flow" --force-overwrite true --export sqlite \
    python3 benchmarks/gpu/experiments/flag_flow.py --out "$OUT/flag-flow-nsys.jsonl" --rounds 1 --repeat 20 \
    --only "${NSYS_ONLY:-bus|v9t, 4|taper, grid 264|alone}" > "$OUT/flag-flow-nsys.txt" 2>&1
  echo "nsys exit $? ($((SECONDS - START)) s)"; rm -f "$OUT/flag-flow.nsys-rep"; xz -T8 "$OUT/flag-flow.sqlite"; ls -la "$OUT"
fi
cp "$OUT"/*.sqlite.xz "$FINAL"/ 2>/dev/null; tar czf "$FINAL/results.tgz" --exclude='*.sqlite.xz' -C "$OUT" . ; echo "total $((SECONDS - START)) s"
