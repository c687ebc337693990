#!/bin/bash
# Fourth probe on the H200: v8 K-tile depth x register cap; v10 ring depth (benchmarks/records/2026-11-21-h200-sgemm/h200.md, v7 -> v8).
set -u
export PYTHONUNBUFFERED=1
source .devkit/setup.sh
export PYTHONPATH=$PWD:$PYTHONPATH
T="python3 benchmarks/gpu/tune_stage.py"
for bk in 8 16; do for mb in 1 2; do
  $T --stage v8 --sizes 1024 --plans 128x128/2,128x128/4,64x64/1 --knobs "V8_BK=$bk;V8_MIN_BLOCKS=$mb" 2>&1 | grep -v '^{' | grep -v "size *plan"
  $T --stage v8 --sizes 2048,4096,8192 --plans auto --knobs "V8_BK=$bk;V8_MIN_BLOCKS=$mb" 2>&1 | grep -v '^{' | grep -v "size *plan"
done; done
$T --stage v10 --sizes 4096,8192 --plans 128x256/1 --knobs "STAGES=2,3,4;V10_ROUND=0" 2>&1 | grep -v '^{'
