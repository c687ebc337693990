#!/usr/bin/env bash
# Issue 21's many-capture target on the GPU machine's 16 cores (no GPU needed, only its CPUs):
# `nsprof analyze DIR` over 256 synthetic captures of 200,000 kernels each on a local Dask cluster of
# 16 workers (benchmarks/analyze_many_scale.py, which builds the exports and times the command in a
# fresh process), recorded in benchmarks/records/2026-11-24-cpu-analyze-scale/analyze_many_scale.json.
# Run from the repository root with .devkit and .whl (dask and distributed wheels) carried; results
# come back as results.tgz in $OUT.
set -uo pipefail
source .devkit/setup.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1
FINAL=$OUT; OUT=/tmp/many; rm -rf "$OUT"; mkdir -p "$OUT"
{ date -u; nproc; free -g | head -2; python3 -c "import dask, distributed, pandas; print('dask', dask.__version__, 'distributed', distributed.__version__, 'pandas', pandas.__version__)"; } | tee "$OUT/env.txt"
echo "== 256 captures x 200k kernels on 16 workers"
timeout 300 python3 benchmarks/analyze_many_scale.py --captures 256 --kernels 200000 --workers 16 --record 2>&1 | tail -5 | tee "$OUT/many.txt"
cp benchmarks/records/2026-11-24-cpu-analyze-scale/analyze_many_scale.json "$OUT/"
tar czf "$FINAL/results.tgz" -C "$OUT" .
