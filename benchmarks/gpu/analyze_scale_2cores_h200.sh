#!/usr/bin/env bash
# Issue 21's one-large-export target measured on two cores of the GPU machine's host, which no
# other session shares (taskset -c 0,1; the analysis runs in a child process, which inherits the
# affinity): benchmarks/analyze_scale.py at 1M, 5M and 10M kernels (100k memcpys, 100k NVTX ranges),
# recorded in benchmarks/records/2026-11-24-cpu-analyze-scale/analyze_scale.json. Run from the repository root with .devkit carried;
# results come back as results.tgz in $OUT.
set -uo pipefail
source .devkit/setup.sh
export PYTHONPATH=$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1
{ date -u; nproc; lscpu | grep -E "Model name|^CPU\(s\)"; free -g | head -2; python3 --version; python3 -c "import pandas, numpy; print('pandas', pandas.__version__, 'numpy', numpy.__version__)"; } | tee "$OUT/env.txt"
timeout 560 taskset -c 0,1 python3 benchmarks/analyze_scale.py --kernels 1000000 5000000 10000000 --runs 2 \
  --label "H200 host, 2 cores by taskset" --record 2>&1 | tail -12 | tee "$OUT/scale.txt"
cp benchmarks/records/2026-11-24-cpu-analyze-scale/analyze_scale.json "$OUT/"
