#!/usr/bin/env bash
# v11 with its 256x128 tile reading B as given (issue 33): the GPU stage tests of the SGEMM ladder,
# v11 against torch.mm paired in two processes, and nsprof bench's own paired % in two runs. Run
# from the repository root with .devkit carried; results in $OUT.
set -uo pipefail
source .devkit/setup.sh
export PYTHONUNBUFFERED=1 COLUMNS=160 PYTHONPATH=$PWD:${PYTHONPATH:-} NSPROF_DATA_DIR=/tmp/nsprof-data
START=$SECONDS
{ date -u; nvidia-smi -L; } > "$OUT/host.txt" 2>&1; cat "$OUT/host.txt"
timeout 300 python3 -m pytest -q -m gpu tests/test_gpu_stages.py -p no:cacheprovider > "$OUT/gpu-tests.txt" 2>&1
echo "gpu stage tests exit $? ($((SECONDS - START)) s)"; grep -E "passed|failed|^FAILED" "$OUT/gpu-tests.txt" | tail -6
for run in 1 2; do
  timeout 120 python3 benchmarks/gpu/paired_vs_torch.py --out "$OUT/paired-run$run.jsonl" --rounds 5 --stages sgemm:v11 \
    > "$OUT/paired-run$run.txt" 2>&1; echo "paired run $run exit $? ($((SECONDS - START)) s)"
done
grep -h '"phase": "paired"' "$OUT"/paired-run*.jsonl | python3 -c "
import json,sys
for l in sys.stdin:
    d=json.loads(l); print(d['stage'], d['size'], d['tile'], round(d['ratio'],3), round(d['median_ms'],4), round(d['torch_ms'],4))"
timeout 200 python3 -m nsprof bench --stage v11 --size 4096,8192 --runs 2 --save-as "$OUT/bench-v11.json" > "$OUT/bench-v11.txt" 2>&1
echo "bench exit $? ($((SECONDS - START)) s)"; cat "$OUT/bench-v11.txt"
python3 -c "
import json
for r in json.load(open('$OUT/bench-v11.json'))['results']:
    print(r['stage'], r['size'], r['tile'], r['status'], r.get('pct_cublas_of'), r.get('run_pct_cublas'), r.get('steps_ms'))"
echo "total $((SECONDS - START)) s"
