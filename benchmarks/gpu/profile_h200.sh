#!/bin/bash
# Issue 3 on the H200: doctor, the GPU capture test, `nsprof profile` for one stage and for the
# whole ladder at 4096 (wall time against bench), and the committed 1024 example capture.
# Run from the repository root through the device tool with .devkit carried.
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source .devkit/setup.sh
export PYTHONPATH=$PWD:$PYTHONPATH
python3 -m nsprof doctor; echo "doctor exit $?"
python3 -m nsprof doctor --json > "$OUT/doctor.json"
echo "== GPU capture test"
python3 -m pytest -q -m gpu tests/test_cli_profile.py 2>&1 | tail -3
echo "== profile --stage v6"
/usr/bin/time -f "wall %e s" python3 -m nsprof profile --stage v6 2>&1 | tail -25
echo "== bench --stage all --size 4096 (for the overhead comparison)"
/usr/bin/time -f "wall %e s" python3 -m nsprof bench --size 4096 --no-save > /dev/null
echo "== profile --stage all --size 4096"
/usr/bin/time -f "wall %e s" python3 -m nsprof profile --stage all --size 4096 2>&1 | tail -30
echo "== example capture at 1024"
python3 -m nsprof profile --stage all --size 1024 --out profiles/examples 2>&1 | tail -5
mv profiles/examples/sgemm-all-1024-* profiles/examples/h200-sgemm-1024
ls -la profiles/*/ profiles/examples/*/
tar czf "$OUT/profiles.tgz" --exclude='*.ncu-rep' --exclude='profiles/sgemm-*/*.nsys-rep' profiles
ls -la "$OUT"
