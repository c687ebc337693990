#!/usr/bin/env bash
# HGEMM on the H200 (device machine, from the repository root): the dev sweep of every launch
# configuration, then which ncu counters count tensor-core FLOPs for HMMA (h1-h5) and HGMMA (h6,
# cuBLAS), on kernels whose FLOPs are known (2MNK = 2,147,483,648 at 1024^3).
set -uo pipefail
source .devkit/setup.sh
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
python3 - <<'PY'
from pathlib import Path
from nsprof.launch.compile import load_kernel
load_kernel(Path("kernels/hgemm/splitk_reduce.cu"), "hgemm_splitk_reduce", arch="sm_90a")
print("NVRTC sm_90a cubin path: ok")
PY
python3 benchmarks/hgemm_dev.py --out "$OUT/hgemm-dev.jsonl" ${HGEMM_STAGES:+--stages $HGEMM_STAGES} > "$OUT/hgemm-dev.log" 2>&1
grep -E "FAILED|error" "$OUT/hgemm-dev.log" | head -n 20
tail -n 14 "$OUT/hgemm-dev.log"
M=gpu__time_duration.sum,sm__ops_path_tensor_src_fp16.sum,sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32.sum,sm__ops_path_tensor_op_hgmma_src_fp16.sum,sm__inst_executed_pipe_tensor_op_hmma.sum,sm__inst_executed_pipe_tensor_op_gmma.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
ncu --clock-control none --nvtx --nvtx-include 'regex:nsprof@hgemm/h[0-9]+/.*' --metrics "$M" --csv --page raw \
  python3 -m nsprof bench --op hgemm --size 1024 --repeat 1 --warmup 1 --no-save --no-baseline > "$OUT/ncu-tensor.csv" 2>&1
echo "ncu exit $?"
python3 - "$OUT/ncu-tensor.csv" <<'PY'
import sys
lines = [l for l in open(sys.argv[1]) if l.startswith('"')]
import csv
rows = list(csv.reader(lines))
head = rows[0]
want = [c for c in head if "__" in c] + ["Kernel Name"]
idx = [head.index(c) for c in want]
print(" | ".join(c.split(".")[0][-28:] for c in want))
for r in rows[2:]:
    print(" | ".join(r[i][:40] for i in idx))
PY
