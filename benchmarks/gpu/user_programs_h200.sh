#!/usr/bin/env bash
# Real Nsight exports of programs nsprof did not write (test data for reading users' profiles):
# a PyTorch training loop under nsys and under ncu's default sections; a CUDA-graph and
# two-stream program under nsys in graph-level and node-level tracing and under ncu --set full;
# and `nsys stats` of each nsys export, the numbers nsprof's summaries must equal.
set -uo pipefail
source .devkit/setup.sh
export PYTHONUNBUFFERED=1
D=/tmp/user-captures; rm -rf "$D"; mkdir -p "$D"; cd "$D"
P=$OLDPWD/tests/programs
nsys --version; ncu --version | tail -1
if [ "${SKIP_NSYS:-0}" != 1 ]; then
nsys profile -t cuda,nvtx --export=sqlite -o train python3 "$P/torch_train_step.py" --steps 4 > train.nsys.log 2>&1; echo "nsys train $?"
nsys profile -t cuda,nvtx --export=sqlite -o graph python3 "$P/cuda_graph_streams.py" > graph.nsys.log 2>&1; echo "nsys graph $?"
nsys profile -t cuda,nvtx --cuda-graph-trace=node --export=sqlite -o graph-node python3 "$P/cuda_graph_streams.py" > graph-node.nsys.log 2>&1; echo "nsys graph-node $?"
for x in train graph graph-node; do
  nsys stats -r cuda_gpu_kern_sum,cuda_gpu_mem_size_sum,cuda_gpu_mem_time_sum,nvtx_gpu_proj_sum --format csv -o "$x-stats" "$x.sqlite" > "$x-stats.log" 2>&1; echo "stats $x $?"
done
fi
# Few launches: an .ncu-rep holds source-level data per launch (about 1 MB each with the default
# sections, 4 MB with --set full), and the fixtures must stay small.
ncu --clock-control none --launch-skip 16 --launch-count ${NCU_LAUNCHES:-8} -o train python3 "$P/torch_train_step.py" --steps 2 > train.ncu.log 2>&1; echo "ncu train $?"
ncu --import train.ncu-rep --csv --page details > train-details.csv; ncu --import train.ncu-rep --csv --page raw --print-units base > train-raw.csv
ncu --clock-control none --set full --launch-count ${NCU_FULL_LAUNCHES:-2} -o graph-full python3 "$P/cuda_graph_streams.py" --replays 2 > graph-full.ncu.log 2>&1; echo "ncu graph full $?"
ncu --import graph-full.ncu-rep --csv --page details > graph-full-details.csv; ncu --import graph-full.ncu-rep --csv --page raw --print-units base > graph-full-raw.csv
ls -la "$D"
tar czf "$OUT/user-captures.tgz" -C "$D" .
