#!/usr/bin/env bash
# Issue 21's many-capture target on the GPU machine's 16 cores (no GPU needed, only its CPUs):
# `nsprof analyze DIR` over 256 synthetic captures of 200,000 kernels each on a local Dask cluster of
# 16 workers (benchmarks/analyze_many_scale.py, which builds the exports and times the command in a
# fresh process), recorded in benchmarks/analyze_many_scale.json; then, while the machine is held, a
# last look at v8 at 8192^3 (L2 band order and thread-tile knobs, benchmarks/gpu/tune_stage.py).
# Run from the repository root with .devkit and .whl (dask and distributed wheels) carried; results
# come back as results.tgz in $OUT.
set -uo pipefail
source .devkit/setup.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1
FINAL=$OUT; OUT=/tmp/many; rm -rf "$OUT"; mkdir -p "$OUT"
{ date -u; nproc; free -g | head -2; python3 -c "import dask, distributed, pandas; print('dask', dask.__version__, 'distributed', distributed.__version__, 'pandas', pandas.__version__)"; } | tee "$OUT/env.txt"
echo "== 256 captures x 200k kernels on 16 workers"
timeout 420 python3 benchmarks/analyze_many_scale.py --captures 256 --kernels 200000 --workers 16 --record 2>&1 | tail -5 | tee "$OUT/many.txt"
cp benchmarks/analyze_many_scale.json "$OUT/"
echo "== v8 at 8192^3 and 4096^3 (the ring in dynamic shared memory: verified first)"
timeout 60 python3 benchmarks/gpu/tune_stage.py --stage v8 --verify-only --sizes 17x33x9,1000x1200x800,4095x4097x4093,128x4096x1024,1024 \
  --plans auto,128x128/1,64x128/2,64x64/1 --knobs "V8_DYN_SMEM=1;V8_STAGES=3,4" 2>"$OUT/verify.err" | grep '^{' > "$OUT/verify.jsonl"
echo "$(wc -l < "$OUT/verify.jsonl") points verified, $(grep -vc '"ok": true' "$OUT/verify.jsonl") failed"
timeout 200 python3 benchmarks/gpu/tune_stage.py --stage v8 --sizes 8192,4096 --plans auto \
  --knobs "" --knobs "V8_SWIZZLE=2,4" --knobs "V8_TN=16;V8_SWIZZLE=4" --knobs "V8_DYN_SMEM=1;V8_STAGES=3,4" \
  --knobs "V8_DYN_SMEM=1;V8_STAGES=3;V8_SWIZZLE=4" 2>"$OUT/tune.err" | grep '^{' > "$OUT/tune.jsonl"
python3 -c 'import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line); print("%14s %14s %-24s %6.2f TFLOP/s %5.1f%%" % (r["size"], r["plan"], r["knobs"] or "defaults", r["tflops"], r["pct_cublas"]))' "$OUT/tune.jsonl"
tar czf "$FINAL/results.tgz" -C "$OUT" .
