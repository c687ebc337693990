#!/usr/bin/env bash
# Every GPU test of the suite, on the lent GPU (the test command of README.md, -m gpu). Run from the repository
# root with .devkit carried; gpu-tests.txt comes back in $OUT.
set -uo pipefail
source .devkit/setup.sh
export PYTHONUNBUFFERED=1 COLUMNS=120 PYTHONPATH=$PWD:${PYTHONPATH:-} NSPROF_DATA_DIR=/tmp/nsprof-data
{ date -u; nvidia-smi -L; nsys --version; ncu --version | tail -1; python3 -c "import cupy; print('cupy', cupy.__version__)"; } > "$OUT/versions.txt" 2>&1
START=$SECONDS
timeout 560 python3 -m pytest -q -m gpu tests -p no:cacheprovider > "$OUT/gpu-tests.txt" 2>&1
echo "gpu tests exit $? ($((SECONDS - START)) s)" | tee -a "$OUT/gpu-tests.txt"; tail -n 15 "$OUT/gpu-tests.txt"
