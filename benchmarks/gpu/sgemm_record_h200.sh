#!/usr/bin/env bash
# Issue 22's record on the H200, one device call (about 8 minutes): the GPU tests of every stage of
# every ladder (square, ragged, extreme shapes; v8's tiles forced, split and shared by stream-K),
# benchmarks/gpu/experiments/v8_tail_probe.py once (v8's tiles with and without their last wave
# shared, against cuBLAS FP32 in the same process, with clock and power), then every SGEMM stage and
# both baselines benchmarked twice at 1024^3, 4096^3, 8192^3, the ragged 1000x1200x800 and the
# nearest aligned 1024x1280x768 (the spread across runs). (The record before this one also re-took
# the example captures and h6's ragged runs: see benchmarks/records/2026-11-24-h200-sgemm/h200-sgemm.md.) Run from the repository
# root with .devkit carried; one archive, results.tgz, comes back in $OUT.
set -uo pipefail
source .devkit/setup.sh
export PYTHONPATH=$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1 COLUMNS=120
FINAL=$OUT; OUT=/tmp/record; rm -rf "$OUT"; mkdir -p "$OUT"
START=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader; } | tee "$OUT/env.txt"
echo "== gpu tests"
timeout 300 python3 -m pytest -q -m gpu tests/test_gpu_stages.py tests/test_launch_plan.py -p no:cacheprovider \
  > "$OUT/gpu-tests.txt" 2>&1; echo "exit $?"; tail -3 "$OUT/gpu-tests.txt"; echo "($((SECONDS - START)) s)"
echo "== v8's tiles, with and without their last wave shared"
timeout 150 python3 benchmarks/gpu/experiments/v8_tail_probe.py --sizes 8192,4096,3072,8000,7680x8448x8192 --rounds 2 \
  > "$OUT/probe.jsonl" 2> "$OUT/probe.err"; echo "exit $? ($((SECONDS - START)) s)"
python3 -c 'import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print("%16s %22s %5s %8.3f ms %6.2f TFLOP/s %6.1f%%  MHz %s" % (r["size"], r["variant"], r["ok"], r["ms"], r["tflops"],
          r["pct_cublas"], r["clock_mhz"]))' "$OUT/probe.jsonl"
SIZES=1024,4096,8192,1000x1200x800,1024x1280x768
for run in 1 2; do
  echo "== bench run $run"
  timeout 150 python3 -m nsprof bench --op sgemm --size $SIZES --save-as "$OUT/bench-sgemm-run$run.json" \
    > "$OUT/bench-sgemm-run$run.txt" 2>&1; echo "exit $? ($((SECONDS - START)) s)"
done
tail -n 40 "$OUT/bench-sgemm-run1.txt"
tar czf "$FINAL/results.tgz" -C "$OUT" . ; du -sh "$FINAL/results.tgz"; echo "total $((SECONDS - START)) s"
