#!/bin/bash
# First-contact probe on the H200 (device tool): versions, a full verification pass,
# the v8 tuning sweep, and ncu/nsys behaviour that the profiler relies on.
# Usage (repository root, devkit carried): bash benchmarks/probe_h200.sh  (writes to $OUT)
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source .devkit/setup.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
python3 -c "import cupy, typer, pandas, matplotlib, rich, nvtx; print('cupy', cupy.__version__, 'typer', typer.__version__, 'pandas', pandas.__version__, 'mpl', matplotlib.__version__)"
ncu --version | tail -1; nsys --version
echo "== ragged + tiny sizes"
python3 -m nsprof bench --size 1000x1200x800,1x1x1,33x65x17,129x7x300 --repeat 3 --warmup 1 --no-save 2>&1 | tee "$OUT/ragged.txt"
echo "== main bench"
python3 -m nsprof bench --size 1024,4096 --json --no-save > "$OUT/bench.json"; echo "bench exit $?"
python3 - <<'PY'
import json, os
d = json.load(open(os.environ.get("OUT", "/tmp/out") + "/bench.json"))
for r in d["results"]:
    print(f"{r['stage']:>4} {r['size']:>15} {r['tile'] or '-':>12} {r['status']:>7} {r['median_ms'] or 0:9.4f} {r['tflops'] or 0:7.2f} {r['pct_cublas'] or 0:6.1f}% err={r['rel_error']}")
PY
echo "== v8 tuning"
python3 benchmarks/tune_sgemm_v8.py --sizes 1024,2048,4096 2>&1 | tail -20
echo "== ncu nvtx filter probe"
for expr in 'nsprof@sgemm/v6/64x64x64' 'nsprof@sgemm/v6/64x64x64/' 'regex:nsprof@sgemm/v6/.*' 'regex:nsprof@^sgemm/v6/' 'nsprof@sgemm/v6/'; do
  echo "-- $expr"
  timeout 120 ncu --clock-control none --nvtx --nvtx-include "$expr" --metrics gpu__time_duration.sum --csv --page raw python3 benchmarks/ncu_nvtx_probe.py > "$OUT/probe.csv" 2>&1
  grep -c cupy_ "$OUT/probe.csv"; grep -o 'cupy_[a-z]*' "$OUT/probe.csv" | sort | uniq -c
done
head -c 3000 "$OUT/probe.csv"
echo "== ncu metric set on v5/v6 at 512"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,l1tex__t_bytes.sum,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,sm__ops_path_tensor_src_fp16.sum,sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic
time ncu --clock-control none --nvtx --nvtx-include 'regex:nsprof@sgemm/v[0-9]+/.*' --metrics $M --csv --page raw -o "$OUT/ladder512" python3 -m nsprof bench --size 512 --stage v1,v5,v6,v10 --repeat 2 --warmup 1 --no-save --no-baseline > "$OUT/ncu_raw_run.txt" 2>&1; echo "ncu exit $?"
tail -5 "$OUT/ncu_raw_run.txt"
ncu --import "$OUT/ladder512.ncu-rep" --csv --page raw --print-units base > "$OUT/ladder512_raw.csv"
ncu --import "$OUT/ladder512.ncu-rep" --csv --page raw --print-units auto > "$OUT/ladder512_raw_auto.csv"
ncu --import "$OUT/ladder512.ncu-rep" --csv --page details > "$OUT/ladder512_details.csv"
ncu --import "$OUT/ladder512.ncu-rep" --csv --page raw --print-nvtx-rename kernel > /dev/null 2>&1
wc -l "$OUT"/ladder512_*.csv; head -c 1500 "$OUT/ladder512_raw.csv"; echo; head -c 1500 "$OUT/ladder512_details.csv"
echo "== nsys"
time nsys profile -t cuda,nvtx --export=sqlite -o "$OUT/nsys_probe" --force-overwrite true python3 -m nsprof bench --size 512 --stage v6 --repeat 3 --warmup 1 --no-save --no-baseline > "$OUT/nsys_run.txt" 2>&1; echo "nsys exit $?"
tail -3 "$OUT/nsys_run.txt"; ls -la "$OUT"/nsys_probe*
rm -f "$OUT/probe.csv" "$OUT/nsys_probe.nsys-rep" "$OUT/ncu_raw_run.txt" "$OUT/nsys_run.txt"; ls -la "$OUT"
ls -la "$OUT"
