#!/bin/bash
# The H200 record run: GPU tests, the full benchmark table, and small real captures of the
# SGEMM ladder at 1024^3 under ncu (raw, auto-unit and details CSV) and nsys (SQLite).
# Run from the repository root through the device tool with .devkit carried:
#   bash benchmarks/gpu/run_h200.sh      (results land in $OUT)
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source .devkit/setup.sh
export PYTHONPATH=$PWD:$PYTHONPATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
echo "== GPU tests"
python3 -m pytest -q -m gpu tests/ 2>&1 | tail -5 | tee "$OUT/gpu_tests.txt"
echo "== full table"
python3 -m nsprof bench --size 1024,2048,4096,8192 --json --save-as "$OUT/bench_full.json" > /dev/null; echo "bench exit $?"
echo "== the done-when command"
python3 -m nsprof bench --size 1024,4096 --no-save 2>&1 | tee "$OUT/bench_done.txt"
echo "== ncu ladder capture at 1024"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,l1tex__t_bytes.sum,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,sm__ops_path_tensor_src_fp16.sum,sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic
INC=()
for s in v1 v2 v3 v4 v5 v6 v7 v8 v9 v10; do INC+=(--nvtx-include "nsprof@sgemm\/$s\/1024x1024x1024/"); done
time ncu --clock-control none --nvtx "${INC[@]}" --metrics $M -o "$OUT/ncu-ladder-1024" \
  python3 -m nsprof bench --size 1024 --repeat 2 --warmup 1 --no-baseline --no-save > "$OUT/ncu.log" 2>&1; echo "ncu exit $?"
grep -c "==PROF== Profiling" "$OUT/ncu.log"; grep "==PROF== Profiling" "$OUT/ncu.log" | head -3
ncu --import "$OUT/ncu-ladder-1024.ncu-rep" --csv --page raw --print-units base > "$OUT/ncu-raw.csv"
ncu --import "$OUT/ncu-ladder-1024.ncu-rep" --csv --page raw --print-units auto > "$OUT/ncu-raw-auto.csv"
ncu --import "$OUT/ncu-ladder-1024.ncu-rep" --csv --page details > "$OUT/ncu-details.csv"
wc -l "$OUT"/ncu-*.csv
rm -f "$OUT/ncu.log"
echo "== nsys ladder capture at 1024"
time nsys profile -t cuda,nvtx --export=sqlite -o "$OUT/nsys-ladder-1024" python3 -m nsprof bench --size 1024 --repeat 5 --warmup 1 --no-save > /dev/null 2>&1; echo "nsys exit $?"
rm -f "$OUT/nsys-ladder-1024.nsys-rep"
ls -la "$OUT"
