#!/usr/bin/env bash
# HGEMM on the H200 (device machine, repository root): the sweep of every declared tile (and,
# with VARIANTS=1, the tuning variants under benchmarks/experiments/2026-11-22-h200-hgemm-variants/), a profile of the whole ladder at 1024^3 under nsys and ncu
# (default metrics, the stall reasons and the tensor-pipe counters), the benchmark record, then
# the GPU tests.
set -uo pipefail
source .devkit/setup.sh
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee "$OUT/gpu.txt"
python3 - > /tmp/variants.json <<'PY'
import glob, json, os, sys
found = []
for name in sorted(glob.glob("benchmarks/experiments/2026-11-22-h200-hgemm-variants/*.json")) if os.environ.get("VARIANTS") == "1" else []:
    try:
        found += json.load(open(name))
    except ValueError as err:
        print(f"skipping {name}: {err}", file=sys.stderr)
print(json.dumps(found))
PY
if [ "${SKIP_SWEEP:-0}" != 1 ]; then
  python3 benchmarks/gpu/hgemm_dev.py --out "$OUT/hgemm-dev.jsonl" --variants /tmp/variants.json ${HGEMM_STAGES:+--stages $HGEMM_STAGES} ${HGEMM_CHECK:+--check $HGEMM_CHECK} > "$OUT/hgemm-dev.log" 2>&1
  grep -E '"status": "(FAILED|error)"' "$OUT/hgemm-dev.jsonl" | cut -c1-400 | head -n 12
  tail -n 30 "$OUT/hgemm-dev.log"
fi
if [ "${SKIP_PROFILE:-0}" != 1 ]; then
  EXTRA=sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32.sum,sm__ops_path_tensor_op_hgmma_src_fp16.sum,sm__inst_executed_pipe_tensor_op_hmma.sum,sm__inst_executed_pipe_tensor_op_gmma.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
  timeout 420 python3 -m nsprof profile --op hgemm --stage all --size 1024 --out /tmp/prof --metrics "default,stalls,$EXTRA" > "$OUT/profile.log" 2>&1
  echo "profile exit $?"; tail -n 5 "$OUT/profile.log"
  tar czf "$OUT/profile.tgz" -C /tmp/prof --exclude='*.ncu-rep' .
  ls -la /tmp/prof/*
fi
if [ "${SKIP_BENCH:-0}" != 1 ]; then  # the benchmark record: benchmarks/records/2026-11-22-h200-hgemm/h200-hgemm.json
  python3 -m nsprof bench --op hgemm --size 512x2048x1024,1024,4096,8192 --json --save-as "$OUT/bench-hgemm.json" > /dev/null 2> "$OUT/bench.log"
  echo "bench exit $?"
  python3 -m nsprof bench --op hgemm --size 4096,8192 --stage h5,h6 --no-save 2>&1 | tail -n 12
fi
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  timeout 300 python3 -m pytest -q -m gpu tests/ -p no:cacheprovider > "$OUT/gpu-tests.log" 2>&1
  tail -n 6 "$OUT/gpu-tests.log"
fi
