#!/bin/bash
# Where v6-v9 lose time at 4096^3: stall reasons and pipe activity from ncu (H200).
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source .devkit/setup.sh
export PYTHONPATH=$PWD:$PYTHONPATH
python3 -m nsprof profile --stage v6,v7,v8,v9 --size 4096 --tool ncu --metrics default,stalls,compute --out /tmp/stalls 2>&1 | tail -3
cp /tmp/stalls/*/ncu-raw.csv "$OUT/ncu-stalls-4096.csv"
python3 - "$OUT/ncu-stalls-4096.csv" <<'PY'
import sys
from nsprof.parse.ncu_csv import load_ncu_csv
k = load_ncu_csv(sys.argv[1]).kernels
cols = [c for c in k.columns if "stalled" in c or "issue_active" in c or "pipe_fma" in c or "warps_active" in c]
k["stage"] = [n[-1].split("/")[1] for n in k["nvtx"]]
print(k.groupby("stage")[cols].mean().T.round(2).to_string())
PY
