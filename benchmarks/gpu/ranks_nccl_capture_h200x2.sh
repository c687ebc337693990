#!/usr/bin/env bash
# Issue 21's two-GPU capture (nvidia-h200-x2): tests/programs/ranks_train.py --backend nccl, rank r on
# GPU r, each rank under its own `nsys profile -t cuda,nvtx`, rank 1 slow on steps 5, 9 and 13; each
# rank's export and its `nsys stats` CSVs go to $OUT/ranks-nccl. Run from the repository root on the
# GPU machine with .devkit carried.
set -uo pipefail
source .devkit/setup.sh
export PYTHONUNBUFFERED=1
W=2; R=$OUT/ranks-nccl; mkdir -p "$R"
{ date -u; nvidia-smi -L; nvidia-smi topo -m; nsys --version;
  python3 -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())"; } > "$R/versions.txt" 2>&1
cat "$R/versions.txt"
python3 -c "import torch; torch.ones(1, device='cuda')"  # warm the driver once before the timed ranks
for r in $(seq 0 $((W - 1))); do
  NCCL_NVLS_ENABLE=0 nsys profile -t cuda,nvtx -s none --cpuctxsw=none --export=sqlite --force-overwrite=true -o "$R/rank$r" \
    python3 tests/programs/ranks_train.py --backend nccl --rank "$r" --world "$W" --port 29513 > "$R/rank$r.txt" 2>&1 &
done
wait
for r in $(seq 0 $((W - 1))); do
  for report in cuda_gpu_kern_sum cuda_gpu_mem_time_sum nvtx_sum; do
    nsys stats -q --force-export=true -f csv -r $report -o "$R/stats-rank$r" "$R/rank$r.nsys-rep" > /dev/null 2>> "$R/stats.log"; done
done
rm -f "$R"/*.qdstrm
ls -la "$R"; cat "$R/stats.log"; tail -3 "$R/rank0.txt" "$R/rank1.txt"
grep -i nccl "$R/stats-rank0_cuda_gpu_kern_sum.csv" | head -3
tar czf "$OUT/ranks-nccl.tgz" -C "$OUT" ranks-nccl; rm -rf "$R"
