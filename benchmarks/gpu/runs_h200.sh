#!/usr/bin/env bash
# Issue 31's real runs: programs captured several times, each run in a fresh process, for `nsprof
# diff` across runs and for the noise floors of single-run diffs.
#   ab-base:   tests/programs/ab_spin.py unchanged, 10 nsys runs (split 5 + 5: a no-change pair)
#   ab-slower: the same with its spin kernel 5% slower (--slower 5), 5 nsys runs
#   true-size: that change as CUDA events see it in one process (ab_spin.py --true-size 5)
#   torch:     tests/programs/torch_compile_block.py, 6 nsys runs (the issue's false calls)
#   ladder:    the SGEMM ladder's v5 and v6 at 1024, 5 nsys runs and one ncu pass
#   bench:     `nsprof bench --runs 5` of v5 and v6 at 1024, twice (a no-change pair of records)
# PART=main runs all but torch, PART=torch torch alone (each within one call's 10 minutes).
# Then `nsprof diff` of each pair. Run from the repository root on the GPU machine with .devkit
# carried; results in $OUT (exports without their .nsys-rep, xz-packed).
set -uo pipefail
source ${DEVKIT:-.devkit}/setup.sh
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PYTHONPATH
PART=${PART:-main}
R=/tmp/runs-result-$PART; W=/tmp/runs-$PART; rm -rf "$R" "$W"; mkdir -p "$R" "$W"
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nsys --version; ncu --version | tail -1
  python3 -c "import cupy, torch, scipy; print('cupy', cupy.__version__, 'torch', torch.__version__, 'scipy', scipy.__version__)"
} > "$R/versions.txt" 2>&1
cat "$R/versions.txt"

step() {  # $1: name, then the command
  local name=$1; shift
  ( time timeout 500 "$@" ) > "$R/$name.txt" 2>&1
  echo "exit $?" >> "$R/$name.txt"; tail -4 "$R/$name.txt"
}

if [ "$PART" = torch ]; then
  step torch python3 -m nsprof profile --tool nsys --runs 5 --out $W/torch -- python3 tests/programs/torch_compile_block.py --steps 20
else
  AB="python3 tests/programs/ab_spin.py --steps 40"
  step ab-base python3 -m nsprof profile --tool nsys --runs 10 --out $W/ab-base -- $AB
  step ab-slower python3 -m nsprof profile --tool nsys --runs 5 --out $W/ab-slower -- $AB --slower 5
  step true-size python3 tests/programs/ab_spin.py --true-size 5
  step ladder python3 -m nsprof profile --stage v5,v6 --size 1024 --runs 5 --out $W/ladder
  step bench-a python3 -m nsprof bench --stage v5,v6 --size 1024 --runs 5 --no-baseline --save-as $W/bench-a.json
  step bench-b python3 -m nsprof bench --stage v5,v6 --size 1024 --runs 5 --no-baseline --save-as $W/bench-b.json
  A=$(ls -d $W/ab-base/*/ | head -1); S=$(ls -d $W/ab-slower/*/ | head -1); L=$(ls -d $W/ladder/*/ | head -1)
  step diff-ab python3 -m nsprof diff "$A" "$S"
  step diff-ladder python3 -m nsprof diff "$L" --stages v5,v6
  step diff-bench python3 -m nsprof diff $W/bench-a.json $W/bench-b.json
fi
for d in $W/*/*/; do cp "$d/manifest.json" "$R/$(basename "$(dirname "$d")")-manifest.json" 2>/dev/null; done
tar cf - --exclude="*.nsys-rep" --exclude="*.qdstrm" --exclude="triton-cache" -C /tmp "runs-$PART" | xz -T16 -6 > /tmp/runs.tar.xz
ls -la /tmp/runs.tar.xz; split -b 15M -d /tmp/runs.tar.xz "$OUT/runs-$PART.tar.xz."
tar czf "$OUT/runs-result-$PART.tgz" -C /tmp "runs-result-$PART"
ls -la "$OUT"
