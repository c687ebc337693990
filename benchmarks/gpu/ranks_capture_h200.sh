#!/usr/bin/env bash
# Issue 21 on the H200: a data-parallel run captured as one nsys report per rank. Two-GPU machines
# were not lent, so WORLD processes share one H200 (gloo all-reduce; no NCCL kernels), rank 1 slow on
# steps 5, 9 and 13 (tests/programs/ranks_train.py). Each rank's export and its `nsys stats` CSVs go
# to $OUT/ranks. Run from the repository root on the GPU machine with .devkit carried.
set -uo pipefail
source .devkit/setup.sh
export PYTHONUNBUFFERED=1
W=${WORLD:-4}; R=$OUT/ranks; mkdir -p "$R"
{ date -u; nvidia-smi -L; nsys --version; python3 -c "import torch; print('torch', torch.__version__)"; } > "$R/versions.txt" 2>&1
python3 -c "import torch; torch.ones(1, device='cuda')"  # warm the driver once before the timed ranks
for r in $(seq 0 $((W - 1))); do
  nsys profile -t cuda,nvtx -s none --cpuctxsw=none --export=sqlite --force-overwrite=true -o "$R/rank$r" \
    python3 tests/programs/ranks_train.py --rank "$r" --world "$W" --port 29512 > "$R/rank$r.txt" 2>&1 &
done
wait
for r in $(seq 0 $((W - 1))); do
  for report in cuda_gpu_kern_sum cuda_gpu_mem_time_sum nvtx_sum; do
    nsys stats -q --force-export=true -f csv -r $report -o "$R/stats-rank$r" "$R/rank$r.nsys-rep" > /dev/null 2>> "$R/stats.log"; done
done
rm -f "$R"/*.qdstrm
tar czf "$OUT/ranks.tgz" -C "$OUT" ranks
ls -la "$R"; cat "$R/stats.log"; tail -3 "$R/rank0.txt"; rm -rf "$R"
