# Sourced first by the record scripts (bash benchmarks/gpu/NAME.sh, from the repository root with .devkit
# carried): the devkit's nvtx and nsys, the project on PYTHONPATH, a scratch data directory, results gathered
# in /tmp/record ($OUT from here on; FINAL is the device tool's $OUT, where the script packs them), START for
# the seconds each step took, and host.txt: the card, its driver, power limit, clocks and bus, nsys, and the
# Python packages that time things.
set -uo pipefail
source .devkit/setup.sh
export PYTHONUNBUFFERED=1 COLUMNS=${COLUMNS:-160} PYTHONPATH=$PWD:${PYTHONPATH:-} NSPROF_DATA_DIR=/tmp/nsprof-data
FINAL=$OUT; OUT=/tmp/record; rm -rf "$OUT"; mkdir -p "$OUT"
START=$SECONDS
{ date -u; nvidia-smi -L
  nvidia-smi --query-gpu=driver_version,power.limit,clocks.max.sm,pcie.link.gen.current,pcie.link.width.current --format=csv
  nsys --version; python3 -c "import torch, cupy; print('torch', torch.__version__, 'cupy', cupy.__version__)"; } > "$OUT/host.txt" 2>&1
cat "$OUT/host.txt"
