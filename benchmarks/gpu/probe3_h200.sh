#!/bin/bash
# Third probe on the H200: v8 launch plans and register cap (one process per point, so a crash
# stays local) and the v10 128x256 tile; the numbers are in benchmarks/records/2026-11-21-h200-sgemm/h200.md (v7 -> v8, v10).
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source .devkit/setup.sh
export PYTHONPATH=$PWD:$PYTHONPATH
T="python3 benchmarks/gpu/tune_stage.py"
echo "== v8 sweep"  # the V8_WARP_ROWS knob it also swept is gone: v8 keeps the 4x8 warp layout
for mb in 1 2; do for size in 1024 4096; do
  plans="128x128/1"; [ $size = 1024 ] && plans="128x128/2,128x128/4,128x128/8,64x128/1,64x64/1"
  $T --stage v8 --sizes $size --plans $plans --knobs "V8_MIN_BLOCKS=$mb" 2>&1 | grep -v '^{' | grep -v "size *plan" || true
done; done
echo "== v10 tiles"
$T --stage v10 --sizes 2048,4096,8192 --plans 128x256/1,128x128/1 --knobs "V10_ROUND=0,1" 2>&1 | grep -v '^{'
