#!/bin/bash
# Issues 5 and 6 on the H200: measure the ceilings, profile the ladder at two sizes, then
# draw the roofline and the report from that real data (and rerun doctor).
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export NSPROF_DATA_DIR="$OUT/nsprof-data"  # where `nsprof ceilings` saves and the captures copy from
source .devkit/setup.sh
export PYTHONPATH=$PWD:$PYTHONPATH
python3 -m nsprof doctor 2>&1 | grep -A2 "counters"
echo "== ceilings"
/usr/bin/time -f "wall %e s" python3 -m nsprof ceilings 2>&1 | tail -20
cp "$NSPROF_DATA_DIR"/ceilings-*.json "$OUT/"
python3 -m pytest -q -m gpu tests/test_ceilings.py 2>&1 | tail -3
echo "== profile two sizes, then roofline and report"
python3 -m nsprof profile --stage all --size 1024,4096 2>&1 | tail -4
python3 -m nsprof roofline reports/ 2>&1 | tail -5
python3 -m nsprof report reports/ 2>&1 | tail -5
python3 -m nsprof explain bank-conflicts --stage v6 --markdown > "$OUT/explain-v6.md" 2>&1; echo "explain exit $?"
tar czf "$OUT/reports.tgz" reports profiles/sgemm-all-*/manifest.json profiles/sgemm-all-*/ncu-raw.csv profiles/sgemm-all-*/nsys.sqlite
ls -la "$OUT"
