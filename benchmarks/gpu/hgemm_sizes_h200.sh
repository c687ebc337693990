#!/usr/bin/env bash
# Issue 60's record of where HGEMM stands: h6 (and h8, Triton, at the squares) paired with the fastest library
# (h7: cuBLAS, cuBLASLt's candidates, torch.mm) at every square size the issue lists, a ragged one, and the model
# shapes M tokens x (N, K) of a transformer's projections and its LM head. Two runs, each in a fresh process,
# copied to $OUT as they end (a timed-out call keeps what finished). Run from the repository root with .devkit
# carried. Steps: the GPU tests of the HGEMM ladder (TESTS=0 skips), a probe of plans (PROBE=0 skips;
# benchmarks/gpu/experiments/h6_plans.py, each plan verified before it is timed against torch.mm or as
# PROBE_AGAINST says; PROBE_SIZES, PROBE_PLANS, PROBE_DEFINES its --sizes, --plans, --defines; by default
# the products of a hundred-odd rows), the kernels torch.mm runs at each size (LIBRARY=0 skips), then the
# benches (SHAPES=squares or models runs one half; RUNS=1 one run; BENCH_FLAGS more options of nsprof bench, such
# as --warm-inputs, and TAG a word in their files' names).
source benchmarks/gpu/record_start.sh
if [ "${TESTS:-1}" = 1 ]; then
  timeout 240 python3 -m pytest -q -m gpu tests/test_gpu_stages.py -k "hgemm or h6" -p no:cacheprovider \
    > "$OUT/gpu-tests-hgemm.txt" 2>&1
  echo "hgemm gpu tests exit $? ($((SECONDS - START)) s)"; tail -2 "$OUT/gpu-tests-hgemm.txt"; cp "$OUT/gpu-tests-hgemm.txt" "$FINAL/"
fi
if [ "${PROBE:-1}" = 1 ]; then
  timeout 150 python3 benchmarks/gpu/experiments/h6_plans.py --out "$OUT/h6-plans.jsonl" \
    --sizes "${PROBE_SIZES:-128x4096x4096,128x14336x4096,128x4096x14336}" \
    --plans "${PROBE_PLANS:-auto,hgemm_h6_split_128x256/2,hgemm_h6_split_128x256/4,hgemm_h6_split_128x256/8,hgemm_h6_split_128x128/2,hgemm_h6_split_128x128/4}" \
    ${PROBE_DEFINES:+--defines "$PROBE_DEFINES"} --against "${PROBE_AGAINST:-torch}" \
    > "$OUT/h6-plans.txt" 2>&1
  echo "plan probe ($((SECONDS - START)) s)"; cp "$OUT"/h6-plans.* "$FINAL/"
fi
SQUARES=1024,2048,3072,4096,6144,8192,3000x5000x2000
MODELS=""
for m in 1 16 128 2048 8192; do for nk in 4096x4096 14336x4096 4096x14336 128256x4096; do MODELS+="${MODELS:+,}${m}x${nk}"; done; done
declare -A SIZES=([squares]=$SQUARES [models]=$MODELS) STAGES=([squares]=${SQUARE_STAGES:-h6,h8} [models]=${MODEL_STAGES:-h6})
if [ "${LIBRARY:-1}" = 1 ]; then  # the kernels torch.mm runs at every size
  timeout 120 python3 benchmarks/gpu/experiments/library_kernels.py --sizes "$SQUARES,$MODELS" \
    --out "$OUT/library-kernels.json" > "$OUT/library-kernels.txt" 2>&1
  echo "library kernels exit $? ($((SECONDS - START)) s)"; cp "$OUT/library-kernels.json" "$FINAL/"
fi
for half in ${SHAPES:-squares models}; do
  for run in $(seq "${RUNS:-2}"); do
    name=bench-hgemm-$half${TAG:+-$TAG}-run$run
    timeout 280 python3 -m nsprof bench --op hgemm --stage "${STAGES[$half]}" --size "${SIZES[$half]}" ${BENCH_FLAGS:-} \
      --save-as "$OUT/$name.json" > "$OUT/$name.txt" 2>&1
    echo "bench $half run $run exit $? ($((SECONDS - START)) s)"
    cp "$OUT/$name.json" "$OUT/host.txt" "$FINAL/"  # the device returns at most 8 files
  done
done
echo "total $((SECONDS - START)) s"
