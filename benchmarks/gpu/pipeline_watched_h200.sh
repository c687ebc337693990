#!/usr/bin/env bash
# `nsprof pipeline` with its watched variant (issue 33), on the lent GPU: the pipeline's GPU tests, the bus
# measured by `nsprof ceilings`, then `nsprof pipeline --size 1024` twice in fresh processes (the second
# without the cold flow or nsys), the first one's profile directory packed; with FLOWS=1 also the watched
# flows of benchmarks/gpu/experiments/flag_flow.py in two processes.
# Run from the repository root with .devkit carried; results.tgz comes back in $OUT.
export COLUMNS=110
source benchmarks/gpu/record_start.sh
rm -rf /tmp/pipe
timeout 240 python3 -m pytest -q -m gpu tests/test_pipeline.py -p no:cacheprovider > "$OUT/gpu-tests.txt" 2>&1
echo "gpu tests exit $? ($((SECONDS - START)) s)"; tail -n 5 "$OUT/gpu-tests.txt"
timeout 120 python3 -m nsprof ceilings > "$OUT/ceilings.txt" 2>&1; echo "ceilings exit $? ($((SECONDS - START)) s)"
cp /tmp/nsprof-data/ceilings-*.json "$OUT/" 2>/dev/null
timeout 200 python3 -m nsprof pipeline --size 1024 --out /tmp/pipe > "$OUT/pipeline-1024.txt" 2>&1
echo "pipeline exit $? ($((SECONDS - START)) s)"; cat "$OUT/pipeline-1024.txt"
timeout 120 python3 -m nsprof pipeline --size 1024 --no-cold --no-nsys --json > "$OUT/pipeline-1024-run2.json" 2>&1
echo "pipeline run 2 exit $? ($((SECONDS - START)) s)"
python3 -c "
import json; d=json.load(open('$OUT/pipeline-1024-run2.json'))
for r in d['records']: print(r['stage'], r['variant'], r['status'], r.get('median_ms'))"
if [ "${FLOWS:-0}" = 1 ]; then  # the flag_flow experiment's watched flows again, on the kernels as they are now
  for run in 1 2; do
    timeout 150 python3 benchmarks/gpu/experiments/flag_flow.py --out "$OUT/flag-flow-run$run.jsonl" --rounds 4 \
      --only "bus|, 4 row blocks|watched" > "$OUT/flag-flow-run$run.txt" 2>&1
    echo "flag flow run $run exit $? ($((SECONDS - START)) s)"
  done
fi
tar czf "$OUT/pipeline-profile.tgz" -C /tmp/pipe . 2>/dev/null
tar czf "$FINAL/results.tgz" -C "$OUT" . ; echo "total $((SECONDS - START)) s"
