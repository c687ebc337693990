#!/usr/bin/env bash
# Issue 22's record on the H200, one device call (about 7 minutes): the GPU tests of every stage of
# every ladder (square, ragged, extreme shapes; v8's cp.async path, v10's and h6's zero-filled ragged
# paths), every SGEMM stage and both baselines benchmarked twice at 1024^3, 4096^3, 8192^3, the
# ragged 1000x1200x800 and the nearest aligned 1024x1280x768 (the spread across runs), h6 and cuBLAS
# at the ragged 1000x1200x808 and 1024x1280x768 twice, the example capture of the SGEMM ladder
# (v1..v10 at 1024^3, nsys and ncu) re-taken for the new v8, and the TF32 stages' capture (v9t, v10,
# v11). Run from the repository root with .devkit carried; one archive, results.tgz, comes back in $OUT.
set -uo pipefail
source .devkit/setup.sh
export PYTHONPATH=$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1 COLUMNS=120
FINAL=$OUT; OUT=/tmp/record; rm -rf "$OUT"; mkdir -p "$OUT"
START=$SECONDS
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader; } | tee "$OUT/env.txt"
echo "== gpu tests"
timeout 300 python3 -m pytest -q -m gpu tests/test_gpu_stages.py tests/test_launch_plan.py -p no:cacheprovider \
  > "$OUT/gpu-tests.txt" 2>&1; echo "exit $?"; tail -3 "$OUT/gpu-tests.txt"; echo "($((SECONDS - START)) s)"
SIZES=1024,4096,8192,1000x1200x800,1024x1280x768
for run in 1 2; do
  echo "== bench run $run"
  timeout 200 python3 -m nsprof bench --op sgemm --size $SIZES --save-as "$OUT/bench-sgemm-run$run.json" \
    > "$OUT/bench-sgemm-run$run.txt" 2>&1; echo "exit $? ($((SECONDS - START)) s)"
  timeout 60 python3 -m nsprof bench --op hgemm --stage h6,h7 --size 1000x1200x808,1024x1280x768 --repeat 200 \
    --save-as "$OUT/bench-h6-run$run.json" > "$OUT/bench-h6-run$run.txt" 2>&1; echo "exit $?"
done
tail -n 40 "$OUT/bench-sgemm-run1.txt"
echo "== example capture of the ladder at 1024"
timeout 240 python3 -m nsprof profile --stage v1,v2,v3,v4,v5,v6,v7,v8,v9,v10 --size 1024 --tool both --out /tmp/prof \
  > "$OUT/profile.txt" 2>&1; echo "exit $? ($((SECONDS - START)) s)"; tail -n 5 "$OUT/profile.txt"
tar czf "$OUT/profile.tgz" -C /tmp/prof .
echo "== capture of the TF32 stages at 1024 (does the TF32 tensor counter see wgmma?)"
timeout 150 python3 -m nsprof profile --stage v9t,v10,v11 --size 1024 --tool both --out /tmp/prof-tf32 \
  > "$OUT/profile-tf32.txt" 2>&1; echo "exit $? ($((SECONDS - START)) s)"
grep -h "tensor_src_tf32\|hgmma_src_tf32" /tmp/prof-tf32/*/ncu-raw.csv | head -3 | cut -c1-300
tar czf "$OUT/profile-tf32.tgz" -C /tmp/prof-tf32 .
tar czf "$FINAL/results.tgz" -C "$OUT" . ; du -sh "$FINAL/results.tgz"; echo "total $((SECONDS - START)) s"
