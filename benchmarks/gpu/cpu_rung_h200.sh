#!/usr/bin/env bash
# Issue 34 on the GPU machine: the CPU rung on its host beside the GPU stages, in one bench per
# ladder (speed-ups over the serial loop and the CPU's BLAS come from the same run), and the CPU
# stages' tests there. Run from the repository root with .devkit carried; results in $OUT.
set -uo pipefail
source .devkit/setup.sh
export PYTHONUNBUFFERED=1 COLUMNS=140 PYTHONPATH=$PWD:${PYTHONPATH:-} NSPROF_DATA_DIR=/tmp/nsprof-data
R=/tmp/run; rm -rf "$R"; mkdir -p "$R"; START=$SECONDS
{ date -u; nvidia-smi -L; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|L2|L3|Flags" | cut -c1-200; cc --version | head -1
  free -g | head -2; python3 -c "import numpy; print('numpy', numpy.__version__)"; } > "$R/host.txt" 2>&1
cat "$R/host.txt"
timeout 120 python3 -m pytest -q tests/test_cpu_stages.py -p no:cacheprovider > "$R/cpu-tests.txt" 2>&1
echo "cpu tests exit $? ($((SECONDS - START)) s)"; tail -2 "$R/cpu-tests.txt"
timeout 60 python3 -m pytest -q -m gpu tests/test_gpu_stages.py -k "v1- or s1- or percent" -p no:cacheprovider > "$R/gpu-tests.txt" 2>&1
echo "gpu tests exit $? ($((SECONDS - START)) s)"; tail -2 "$R/gpu-tests.txt"
timeout 240 python3 -m nsprof bench --op sgemm --stage v0,v0b,v0blas,v1,v8,v9,v9t,v11 --size 1024,4096 \
  --save-as "$R/cpu-sgemm.json" > "$R/cpu-sgemm.txt" 2>&1; echo "sgemm exit $? ($((SECONDS - START)) s)"
timeout 200 python3 -m nsprof bench --op sgemv --stage s0,s0b,s0blas,s1,s6,s7 --size 4096,32768,256x1048576 \
  --save-as "$R/cpu-sgemv.json" > "$R/cpu-sgemv.txt" 2>&1; echo "sgemv exit $? ($((SECONDS - START)) s)"
cat "$R/cpu-sgemm.txt" "$R/cpu-sgemv.txt"
tar czf "$OUT/run.tgz" -C /tmp run
echo "total $((SECONDS - START)) s"
