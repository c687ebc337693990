#!/usr/bin/env bash
# Issue 22's record on the H200, one device call: v8's defaults checked against cuBLAS
# (sgemm_fp32_check_h200.sh), the GPU tests of the SGEMM stages, every SGEMM stage and both
# baselines benchmarked twice at 1024^3, 4096^3, 8192^3, the ragged 1000x1200x800 and the nearest
# aligned 1024x1280x768 (the spread across runs), and a profile of the TF32 stages (v9t, v10, v11) at
# 1024^3 under nsys and ncu. Run from the repository root with .devkit carried; results in $OUT.
set -uo pipefail
source .devkit/setup.sh
export PYTHONPATH=$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1 COLUMNS=120
SIZES=1024,4096,8192,1000x1200x800,1024x1280x768
echo "== v8 check"; timeout 200 bash benchmarks/gpu/sgemm_fp32_check_h200.sh > "$OUT/fp32-check.txt" 2>&1; tail -25 "$OUT/fp32-check.txt"
echo "== gpu tests"; timeout 120 python3 -m pytest -q -m gpu tests/test_gpu_stages.py -k "sgemm" -p no:cacheprovider > "$OUT/gpu-tests.txt" 2>&1; tail -3 "$OUT/gpu-tests.txt"
for run in 1 2; do
  echo "== bench run $run"
  timeout 150 python3 -m nsprof bench --op sgemm --size $SIZES --save-as "$OUT/bench-sgemm-run$run.json" > "$OUT/bench-sgemm-run$run.txt" 2>&1
  echo "exit $?"
done
cat "$OUT/bench-sgemm-run1.txt" | tail -70
echo "== profile of the TF32 stages"
timeout 150 python3 -m nsprof profile --stage v9t,v10,v11 --size 1024 --tool both --out /tmp/prof > "$OUT/profile.txt" 2>&1; echo "exit $?"
tail -5 "$OUT/profile.txt"
tar czf "$OUT/profile.tgz" -C /tmp/prof . ; du -sh "$OUT"/*
