#!/usr/bin/env bash
# Every GPU test of the suite on the lent machine, and the host CPU's ceilings (nsprof ceilings --cpu),
# after issue 33's library tuning and issue 34's CPU rung. Run from the repository root with .devkit
# carried; results in $OUT.
set -uo pipefail
source .devkit/setup.sh
export PYTHONUNBUFFERED=1 COLUMNS=120 PYTHONPATH=$PWD:${PYTHONPATH:-} NSPROF_DATA_DIR=/tmp/nsprof-data
R=/tmp/run; rm -rf "$R"; mkdir -p "$R"; START=$SECONDS
{ date -u; nvidia-smi -L; } > "$R/versions.txt" 2>&1; cat "$R/versions.txt"
timeout 60 python3 -m nsprof ceilings --cpu --json --out "$R" > "$R/cpu-ceilings.json" 2> "$R/cpu-ceilings.log"
echo "cpu ceilings exit $? ($((SECONDS - START)) s)"; python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['device']['device'], {k: v['value'] for k, v in d['ceilings'].items()})" "$R/cpu-ceilings.json"
timeout 470 python3 -m pytest -q -m gpu tests -p no:cacheprovider > "$R/gpu-tests.txt" 2>&1
echo "gpu tests exit $? ($((SECONDS - START)) s)"; grep -E "passed|failed|^FAILED|^ERROR" "$R/gpu-tests.txt" | tail -12
tar czf "$OUT/run.tgz" -C /tmp run
