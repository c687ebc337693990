#!/usr/bin/env bash
# Every GPU test on the H200, then a capture that checks the measured ceilings travel with it:
# nsprof ceilings saves them to the data directory, nsprof profile copies them into the manifest,
# and nsprof analyze reads them from there in another directory.
# Run from the repository root on the GPU machine with .devkit and .whl carried; results in $OUT.
set -uo pipefail
source .devkit/setup.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
export PYTHONUNBUFFERED=1 COLUMNS=120 NSPROF_DATA_DIR=/tmp/nsprof-data
R=$OUT/run; mkdir -p "$R"
{ date -u; nvidia-smi -L; nsys --version; ncu --version | tail -1; python3 -c "import cupy; print('cupy', cupy.__version__)"; } > "$R/versions.txt" 2>&1
timeout 540 python3 -m pytest -q -m gpu tests -p no:cacheprovider > "$R/gpu-tests.txt" 2>&1; echo "gpu tests exit $?" >> "$R/gpu-tests.txt"
python3 -m nsprof ceilings > "$R/ceilings.txt" 2>&1; echo "exit $?" >> "$R/ceilings.txt"
python3 -m nsprof profile --stage v1,v9 --size 512 --out /tmp/caps > "$R/profile.txt" 2>&1; echo "exit $?" >> "$R/profile.txt"
cap=$(ls -d /tmp/caps/*/ | head -1)
python3 -c "import json,sys; m=json.load(open(sys.argv[1])); c=m.get('ceilings'); print('manifest ceilings:', None if c is None else (c.get('copied_from'), sorted(c['ceilings'])))" "$cap/manifest.json" >> "$R/profile.txt" 2>&1
(cd /tmp && PYTHONPATH=$OLDPWD:$PYTHONPATH NSPROF_DATA_DIR=/tmp/empty python3 -m nsprof analyze "$cap") > "$R/analyze.txt" 2>&1; echo "exit $?" >> "$R/analyze.txt"
tar czf "$OUT/run.tgz" -C "$OUT" run
