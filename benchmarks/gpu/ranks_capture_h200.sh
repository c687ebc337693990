#!/usr/bin/env bash
# Issue 21: a data-parallel run captured as one nsys report per rank (tests/programs/ranks_train.py,
# rank 1 slow on steps 5, 9 and 13), each rank in its own process under its own nsys; each rank's
# export and its `nsys stats` CSVs go to $OUT/ranks (BACKEND=gloo) or $OUT/ranks-nccl. Run from the
# repository root on the GPU machine with .devkit carried.
#   BACKEND=gloo (default), WORLD=4, on nvidia-h200: the ranks share one H200 and average through
#     gloo (no NCCL kernels; NCCL cannot put two ranks on one GPU): tests/data/ranks.
#   BACKEND=nccl WORLD=2, on nvidia-h200-x2: rank r on GPU r, NCCL's all-reduce kernels (NVLink
#     multicast off, as the machine's notes ask): tests/data/ranks-nccl.
set -uo pipefail
source .devkit/setup.sh
export PYTHONUNBUFFERED=1
B=${BACKEND:-gloo}; W=${WORLD:-4}
if [ "$B" = nccl ]; then NAME=ranks-nccl; PORT=29513; export NCCL_NVLS_ENABLE=0; else NAME=ranks; PORT=29512; fi
R=$OUT/$NAME; mkdir -p "$R"
{ date -u; nvidia-smi -L; [ "$B" = nccl ] && nvidia-smi topo -m; nsys --version
  python3 -c "import torch; print('torch', torch.__version__, *(['nccl', torch.cuda.nccl.version()] if '$B' == 'nccl' else []))"
} > "$R/versions.txt" 2>&1
python3 -c "import torch; torch.ones(1, device='cuda')"  # warm the driver once before the timed ranks
for r in $(seq 0 $((W - 1))); do
  nsys profile -t cuda,nvtx -s none --cpuctxsw=none --export=sqlite --force-overwrite=true -o "$R/rank$r" \
    python3 tests/programs/ranks_train.py --backend "$B" --rank "$r" --world "$W" --port $PORT > "$R/rank$r.txt" 2>&1 &
done
wait
for r in $(seq 0 $((W - 1))); do
  for report in cuda_gpu_kern_sum cuda_gpu_mem_time_sum nvtx_sum; do
    nsys stats -q --force-export=true -f csv -r $report -o "$R/stats-rank$r" "$R/rank$r.nsys-rep" > /dev/null 2>> "$R/stats.log"; done
done
rm -f "$R"/*.qdstrm
tar czf "$OUT/$NAME.tgz" -C "$OUT" "$NAME"
ls -la "$R"; cat "$R/stats.log"; tail -n 3 "$R/rank0.txt"; rm -rf "$R"
