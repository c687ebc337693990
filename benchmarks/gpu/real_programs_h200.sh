#!/usr/bin/env bash
# Issue 28's captures: `nsprof profile -- CMD` on programs people actually profile.
#   PART=jax:    a JAX ResNet-50 training loop (tests/programs/jax_resnet_train.py) twice: once with
#                both tools (ncu crashes on JAX programs here: the partial profile), once nsys only
#                (the second run for `nsprof diff`); nsys stats of the first.
#   PART=triton: Triton's autotuned matmul timed by do_bench beside torch.matmul
#                (tests/programs/triton_matmul_bench.py), both tools, guided ncu choice.
#   PART=after:  both programs again with both tools once the fixes were in (the JAX run ends in a
#                partial profile, exit 3; the Triton run's guided choice), their summaries, manifests
#                and analyses (no exports).
# Then `nsprof analyze` of each, terminal and --json, timed. Run from the repository root on the
# GPU machine with .devkit carried (nsprof reads ncu's CSV pages there); results in $OUT
# (exports compressed and split under 16 MB a file).
set -uo pipefail
source ${DEVKIT:-.devkit}/setup.sh
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PYTHONPATH
PART=${PART:-jax}
R=/tmp/run-$PART; rm -rf "$R"; mkdir -p "$R"
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nsys --version; ncu --version | tail -1
  python3 -c "import jax, triton, torch; print('jax', jax.__version__, 'triton', triton.__version__, 'torch', torch.__version__)"; } > "$R/versions.txt" 2>&1
cat "$R/versions.txt"

analyze() {  # $1: profile directory, $2: name
  for cols in 80 120; do
    ( time COLUMNS=$cols timeout 200 python3 -m nsprof analyze "$1" ) > "$R/$2-analyze-$cols.txt" 2>&1
  done
  ( time timeout 200 python3 -m nsprof analyze "$1" --json > "$R/$2-analyze.json" ) > "$R/$2-analyze-json.txt" 2>&1
}

if [ "$PART" = jax ]; then
  ( time timeout 420 python3 -m nsprof profile --out /tmp/jax-a -- python3 tests/programs/jax_resnet_train.py --steps 30 ) > "$R/jax-a-profile.txt" 2>&1
  echo "exit $?" >> "$R/jax-a-profile.txt"; tail -5 "$R/jax-a-profile.txt"
  ( time timeout 300 python3 -m nsprof profile --tool nsys --out /tmp/jax-b -- python3 tests/programs/jax_resnet_train.py --steps 30 ) > "$R/jax-b-profile.txt" 2>&1
  echo "exit $?" >> "$R/jax-b-profile.txt"; tail -3 "$R/jax-b-profile.txt"
  A=$(ls -d /tmp/jax-a/*/ | head -1); B=$(ls -d /tmp/jax-b/*/ | head -1)
  ( time nsys stats -q -r cuda_gpu_kern_sum,nvtx_gpu_proj_sum --format csv -o "$R/jax-a-stats" "$A/nsys.sqlite" ) > "$R/jax-a-stats.txt" 2>&1
  cp "$A"/manifest.json "$R/jax-a-manifest.json"; cp "$A"/*.log "$R/" 2>/dev/null
  analyze "$A" jax-a
  tar cf - --exclude="*.nsys-rep" --exclude="*.qdstrm" -C /tmp jax-a jax-b | xz -T16 -6 > /tmp/jax.tar.xz
  ls -la /tmp/jax.tar.xz; split -b 15M -d /tmp/jax.tar.xz "$OUT/jax.tar.xz."
elif [ "$PART" = after ]; then
  for prog in jax_resnet_train triton_matmul_bench; do
    args=$([ $prog = jax_resnet_train ] && echo "--steps 30")
    ( time timeout 400 python3 -m nsprof profile --out /tmp/after-$prog -- python3 tests/programs/$prog.py $args ) > "$R/$prog-profile.txt" 2>&1
    echo "exit $?" >> "$R/$prog-profile.txt"; tail -8 "$R/$prog-profile.txt"
    D=$(ls -d /tmp/after-$prog/*/ | head -1); cp "$D/manifest.json" "$R/$prog-manifest.json"; cp "$D"/*.log "$R/" 2>/dev/null
    for f in "$D"/*.log; do cp "$f" "$R/$prog-$(basename "$f")"; done
    analyze "$D" "$prog"
  done
else
  ( time timeout 400 python3 -m nsprof profile --out /tmp/triton -- python3 tests/programs/triton_matmul_bench.py ) > "$R/triton-profile.txt" 2>&1
  echo "exit $?" >> "$R/triton-profile.txt"; tail -5 "$R/triton-profile.txt"
  T=$(ls -d /tmp/triton/*/ | head -1)
  nsys stats -q -r cuda_gpu_kern_sum,nvtx_gpu_proj_sum --format csv -o "$R/triton-stats" "$T/nsys.sqlite" > /dev/null 2>&1
  analyze "$T" triton
  tar cf - --exclude="*.nsys-rep" --exclude="*.qdstrm" -C /tmp triton | xz -T16 -6 > "$OUT/triton.tar.xz"
fi
tar czf "$OUT/run-$PART.tgz" -C /tmp "run-$PART"
ls -la "$OUT"
