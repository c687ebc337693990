#!/usr/bin/env bash
# SGEMV on the H200 (device machine, repository root): every stage verified and timed at the
# ragged and extreme shapes, the benchmark record (benchmarks/records/2026-11-22-h200-sgemv/h200-sgemv.json), a profile of the
# ladder at 4096^2 with the sector counters `explain coalescing` reads, then the GPU tests.
set -uo pipefail
source .devkit/setup.sh
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee "$OUT/gpu.txt"
if [ "${SKIP_CHECK:-0}" != 1 ]; then
  python3 -m nsprof bench --op sgemv --size 1000x1001,4097x3,3x4097,1x1,1048576x256,256x1048576 --no-save 2>&1 | tee "$OUT/check.txt" | tail -n 60
fi
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  python3 -m nsprof bench --op sgemv --size 4096,8192,16384,32768,1048576x256,256x1048576 --json --save-as "$OUT/bench-sgemv.json" > /dev/null 2> "$OUT/bench.log"
  echo "bench exit $?"
  python3 benchmarks/bench_table.py "$OUT/bench-sgemv.json" | cut -c1-200
fi
if [ "${SKIP_PROFILE:-0}" != 1 ]; then
  SECTORS=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
  timeout 300 python3 -m nsprof profile --op sgemv --stage all --size 4096 --out /tmp/prof --metrics "default,memory,$SECTORS" > "$OUT/profile.log" 2>&1
  echo "profile exit $?"; tail -n 5 "$OUT/profile.log"
  tar czf "$OUT/profile.tgz" -C /tmp/prof --exclude='*.ncu-rep' .
fi
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  timeout 300 python3 -m pytest -q -m gpu tests/ -p no:cacheprovider > "$OUT/gpu-tests.log" 2>&1
  tail -n 6 "$OUT/gpu-tests.log"
fi
