#!/usr/bin/env bash
# Issue 29 on the H200: the Triton stages (v12, v12t, h8, s8) beside the CUDA stages and cuBLAS.
#   1. every GPU stage test (all stages verified at square, ragged, tiny and tall/flat sizes) and
#      the Triton tuning tests;
#   2. bench at the issue's sizes, twice (two runs for the spread between runs): SGEMM v8, v11, v12,
#      v12t with cuBLAS FP32 and TF32 at 4096^3 and 8192^3; HGEMM h6, h8 with cuBLAS; SGEMV s6, s8
#      with cuBLAS at 16384^2;
#   3. the example captures (nsys + ncu) of the Triton stages beside the stages they compare with.
#   PART=all (default) runs 1-3; PART=captures runs 3 and the GPU tests of the Triton stages;
#   PART=tma runs benchmarks/gpu/experiments/triton_hgemm_tma.py (h8 against TMA variants);
#   PART=sgemv-shapes benches s6, s8 and cuBLAS twice at the README table's SGEMV shapes;
#   PART=counters runs benchmarks/gpu/experiments/tensor_precision_counters.py under ncu (BF16, FP8, INT8).
# Run from the repository root on the GPU machine with .devkit carried; results in $OUT.
set -uo pipefail
source .devkit/setup.sh
export PYTHONUNBUFFERED=1 COLUMNS=120 PYTHONPATH=$PWD:${PYTHONPATH:-}
R=/tmp/run; rm -rf "$R"; mkdir -p "$R"
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nsys --version; ncu --version | tail -1
  python3 -c "import cupy, triton, torch; print('cupy', cupy.__version__, 'triton', triton.__version__, 'torch', torch.__version__)"; } > "$R/versions.txt" 2>&1
cat "$R/versions.txt"
PART=${PART:-all}
if [ "$PART" = tma ]; then
  timeout 500 python3 benchmarks/gpu/experiments/triton_hgemm_tma.py "$R/tma.json" > "$R/tma.txt" 2>&1
  echo "exit $?" >> "$R/tma.txt"; cat "$R/tma.txt"; tar czf "$OUT/run.tgz" -C /tmp run; exit 0
fi
if [ "$PART" = counters ]; then
  M=sm__ops_path_tensor_src_bf16_dst_fp32.sum,sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum,sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32.sum
  M=$M,sm__ops_path_tensor_src_fp8.sum,sm__ops_path_tensor_src_int8.sum,sm__ops_path_tensor_op_igmma_src_int8.sum,sm__ops_path_tensor_op_imma_src_int8.sum
  M=$M,sm__ops_path_tensor_src_fp16.sum,sm__ops_path_tensor_src_tf32_dst_fp32.sum,sm__inst_executed_pipe_tensor_op_gmma.sum,gpu__time_duration.sum
  timeout 300 ncu --nvtx --nvtx-include "probe-bf16/" --nvtx-include "probe-fp8/" --nvtx-include "probe-int8/" --metrics "$M" --csv \
    python3 benchmarks/gpu/experiments/tensor_precision_counters.py > "$R/counters.csv" 2> "$R/counters.log"
  echo "exit $?" >> "$R/counters.log"; cat "$R/counters.csv" "$R/counters.log" | tail -60; tar czf "$OUT/run.tgz" -C /tmp run; exit 0
fi
if [ "$PART" = sgemv-shapes ]; then
  for run in 1 2; do
    timeout 250 python3 -m nsprof bench --op sgemv --stage s6,s8 --size 32768x32768,256x1048576 --save-as "$R/bench-sgemv-shapes-$run.json" > "$R/bench-sgemv-shapes-$run.txt" 2>&1
  done
  cat "$R"/bench-sgemv-shapes-*.txt; tar czf "$OUT/run.tgz" -C /tmp run; exit 0
fi
K=; [ "$PART" = captures ] && K="v12 or h8 or s8 or triton"
timeout 420 python3 -m pytest -q -m gpu tests/test_gpu_stages.py ${K:+-k "$K"} -p no:cacheprovider > "$R/gpu-tests.txt" 2>&1
echo "gpu tests exit $?" >> "$R/gpu-tests.txt"; tail -3 "$R/gpu-tests.txt"
[ "$PART" = captures ] || for run in 1 2; do
  timeout 300 python3 -m nsprof bench --op sgemm --stage v8,v11,v12,v12t --size 4096,8192 --save-as "$R/bench-sgemm-$run.json" > "$R/bench-sgemm-$run.txt" 2>&1
  timeout 300 python3 -m nsprof bench --op hgemm --stage h6,h8 --size 4096,8192 --save-as "$R/bench-hgemm-$run.json" > "$R/bench-hgemm-$run.txt" 2>&1
  timeout 200 python3 -m nsprof bench --op sgemv --stage s6,s8 --size 16384x16384 --save-as "$R/bench-sgemv-$run.json" > "$R/bench-sgemv-$run.txt" 2>&1
done
[ "$PART" = captures ] || cat "$R/bench-sgemm-1.txt" "$R/bench-hgemm-1.txt" "$R/bench-sgemv-1.txt"
mkdir -p /tmp/caps
timeout 300 python3 -m nsprof profile --op sgemm --stage v8,v11,v12,v12t --size 1024 --out /tmp/caps > "$R/profile-sgemm.txt" 2>&1
timeout 300 python3 -m nsprof profile --op hgemm --stage h6,h8 --size 1024 --out /tmp/caps > "$R/profile-hgemm.txt" 2>&1
timeout 300 python3 -m nsprof profile --op sgemv --stage s6,s8 --size 4096 --out /tmp/caps > "$R/profile-sgemv.txt" 2>&1
for f in "$R"/profile-*.txt; do tail -4 "$f"; done
for cap in /tmp/caps/*/; do COLUMNS=100 timeout 100 python3 -m nsprof analyze "$cap" > "$R/analyze-$(basename "$cap").txt" 2>&1; done
tar czf "$OUT/caps.tgz" --exclude='*.ncu-rep' -C /tmp caps
tar czf "$OUT/run.tgz" -C /tmp run
ls -la "$OUT"
