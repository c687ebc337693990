#!/usr/bin/env bash
# `nsprof profile -- CMD` on a real PyTorch program, and what `nsprof analyze` says of it (README
# output); the GPU tests of capture; a failing program; an .nsys-rep exported by the real nsys.
# Run from the repository root on the GPU machine with .devkit and .whl (NVIDIA's ncu-report wheel) carried.
set -uo pipefail
source .devkit/setup.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
export PYTHONUNBUFFERED=1
R=$OUT/run; mkdir -p "$R"
{ date -u; nvidia-smi -L; nsys --version; ncu --version | tail -1; python3 -c "import torch, cupy; print('torch', torch.__version__, 'cupy', cupy.__version__)"; } > "$R/versions.txt" 2>&1
P=/tmp/programs; rm -rf $P
# the committed example (profiles/examples/h200-program-torch-train, without its 10 MB .ncu-rep)
( time python3 -m nsprof profile --launch-count ${LAUNCHES:-12} --out $P -- python3 tests/programs/torch_train_step.py --steps 4 ) > "$R/profile.txt" 2>&1; echo "profile exit $?" >> "$R/profile.txt"
D=$(ls -d $P/*/ | head -1)
COLUMNS=100 python3 -m nsprof analyze "$D" > "$R/analyze.txt" 2>&1
COLUMNS=100 python3 -m nsprof analyze "$D" --attribution process > "$R/analyze-process.txt" 2>&1
python3 -m nsprof analyze "$D" --json > "$R/analyze.json" 2>&1
( python3 -m nsprof profile --tool ncu --range forward --launch-count 4 --out /tmp/ranged -- python3 tests/programs/torch_train_step.py --steps 2; echo "exit $?"; COLUMNS=100 python3 -m nsprof analyze /tmp/ranged/*/ ) > "$R/profile-range.txt" 2>&1
( python3 -m nsprof profile --out /tmp/failing -- python3 -c "import sys; print('bye'); sys.exit(3)"; echo "exit $?"; cat /tmp/failing/*/manifest.json ) > "$R/profile-fail.txt" 2>&1
mkdir -p /tmp/rep && cp tests/data/user-programs/graph.nsys-rep /tmp/rep/ && ( time python3 -m nsprof analyze /tmp/rep/graph.nsys-rep --json > "$R/nsys-rep.json"; ls -la /tmp/rep ) > "$R/nsys-rep.txt" 2>&1
timeout ${TEST_TIMEOUT:-420} python3 -m pytest -q -m gpu tests -p no:cacheprovider --continue-on-collection-errors > "$R/gpu-tests.txt" 2>&1; echo "gpu tests exit $?" >> "$R/gpu-tests.txt"
tar czf "$OUT/program.tgz" --exclude=ncu.ncu-rep -C "$P" .
tar czf "$OUT/run.tgz" -C "$OUT" run
ls -la "$D"
