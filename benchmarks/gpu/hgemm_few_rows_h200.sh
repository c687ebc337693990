#!/usr/bin/env bash
# Issue 60's few-row probe: h6's 64-row tiles (64x256, 64x128: each consumer warpgroup half the columns, K split
# over gridDim.z) against torch.mm at the model shapes of 1, 16 and 128 tokens, each plan verified before it
# is timed (benchmarks/gpu/experiments/h6_plans.py); first the GPU tests of h6. Run from the repository root
# with .devkit carried; results in $OUT.
source benchmarks/gpu/record_start.sh
if [ "${TESTS:-1}" = 1 ]; then
  timeout 200 python3 -m pytest -q -m gpu tests/test_gpu_stages.py -k "h6" -p no:cacheprovider > "$OUT/gpu-tests-h6.txt" 2>&1
  echo "h6 gpu tests exit $? ($((SECONDS - START)) s)"; tail -3 "$OUT/gpu-tests-h6.txt"; cp "$OUT/gpu-tests-h6.txt" "$FINAL/"
fi
probe() { timeout 200 python3 benchmarks/gpu/experiments/h6_plans.py --out "$OUT/h6-few-rows.jsonl" "$@" >> "$OUT/h6-few-rows.txt" 2>&1; }
FEW=${FEW:-1x4096x4096,1x14336x4096,1x4096x14336,1x128256x4096,16x4096x4096,16x14336x4096,16x4096x14336,16x128256x4096}
probe --sizes "$FEW" --plans "${FEW_PLANS:-auto,64x256/1,64x256/2,64x256/4,64x256/8,64x256/16,64x128/2,64x128/4,64x128/8,64x128/16}"
echo "few-row probe ($((SECONDS - START)) s)"; cp "$OUT"/h6-few-rows.* "$FINAL/"
probe --sizes "${ROWS128:-128x4096x4096,128x14336x4096,128x4096x14336}" \
  --plans "${ROWS128_PLANS:-auto,64x256/1,64x256/2,64x256/4,64x128/2,64x128/4,128x64/2}"
echo "128-row probe ($((SECONDS - START)) s)"; cp "$OUT"/h6-few-rows.* "$FINAL/"
