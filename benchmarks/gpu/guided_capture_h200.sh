#!/usr/bin/env bash
# Issue 18 on the H200: the guided capture of a torch.compile program (reduce-overhead: Triton
# kernels in CUDA graphs, cuDNN attention, NVTX ranges in a domain of its own) against today's plain
# capture (ncu on the first 50 launches), nsys stats of the guided capture for the tests, how ncu
# counts fp16 thread instructions (tests/programs/fp16_flops.py), and real pairs for nsprof diff.
# Run from the repository root on the GPU machine with .devkit carried; results in $OUT.
set -uo pipefail
source .devkit/setup.sh
export PYTHONUNBUFFERED=1 COLUMNS=100
R=$OUT/run; mkdir -p "$R"; C=/tmp/caps; rm -rf $C; mkdir -p $C
{ date -u; nvidia-smi -L; nsys --version; ncu --version | tail -1
  python3 -c "import torch, triton, cupy; print('torch', torch.__version__, 'triton', triton.__version__, 'cupy', cupy.__version__)"; } > "$R/versions.txt" 2>&1
PROG="python3 tests/programs/torch_compile_block.py --steps ${STEPS:-20}"
# how ncu counts fp16 work on the CUDA cores
ncu --clock-control none --metrics smsp__sass_thread_inst_executed_op_hadd_pred_on.sum,smsp__sass_thread_inst_executed_op_hmul_pred_on.sum,smsp__sass_thread_inst_executed_op_hfma_pred_on.sum,smsp__sass_thread_inst_executed_op_fp16_pred_on.sum,smsp__sass_thread_inst_executed_ops_hadd_hmul_hfma_pred_on.sum,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,gpu__time_duration.sum --csv --print-units base python3 tests/programs/fp16_flops.py > "$R/fp16-counters.csv" 2> "$R/fp16-counters.log"
# The program runs once first, as a user's program has before it is profiled: torch.compile caches
# what it compiled and autotuned, so a first run does work (Triton benchmarking, its L2-flushing
# fills) that later runs, ncu's included, skip.
( time $PROG --steps 2 ) > "$R/warm.txt" 2>&1
# the guided capture (the default) and today's plain one, timed
( time python3 -m nsprof profile --out $C/guided -- $PROG ) > "$R/guided.txt" 2>&1; echo "exit $?" >> "$R/guided.txt"
[ -n "${PLAIN:-}" ] && { ( time python3 -m nsprof profile --launch-count 50 --out $C/plain -- $PROG ) > "$R/plain.txt" 2>&1; echo "exit $?" >> "$R/plain.txt"; }
G=$(ls -d $C/guided/*/ | head -1)
for report in cuda_gpu_kern_sum cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum nvtx_gpu_proj_sum; do
  nsys stats -q -f csv -r $report -o "$G/stats" "$G/nsys.nsys-rep" > /dev/null 2>> "$R/stats.log"; done
python3 -m nsprof analyze "$G" > "$R/analyze-guided.txt" 2>&1; echo "exit $?" >> "$R/analyze-guided.txt"
python3 -m nsprof analyze "$G" --json > "$R/analyze-guided.json" 2>&1
[ -n "${PLAIN:-}" ] && python3 -m nsprof analyze $C/plain/*/ > "$R/analyze-plain.txt" 2>&1
if [ -n "${PAIRS:-}" ]; then  # pairs for nsprof diff: the training step twice unchanged, the block compiled and eager
  for run in a b; do python3 -m nsprof profile --tool nsys --out $C/train-$run -- python3 tests/programs/torch_train_step.py --steps 30 > "$R/train-$run.txt" 2>&1; done
  python3 -m nsprof profile --tool nsys --out $C/eager -- $PROG --eager > "$R/eager.txt" 2>&1
fi
timeout 300 python3 -m pytest -q -m gpu tests/test_profile_program.py -p no:cacheprovider > "$R/gpu-tests.txt" 2>&1; echo "gpu tests exit $?" >> "$R/gpu-tests.txt"
ls -laR $C > "$R/files.txt"
tar czf "$OUT/captures.tgz" --exclude='*.qdstrm' -C $C .
tar czf "$OUT/run.tgz" -C "$OUT" run
du -sh $OUT/*
