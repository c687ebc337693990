#!/usr/bin/env bash
# Issue 60's measure of where HGEMM stands: h6 (and h8, Triton) paired with the fastest library (h7:
# cuBLAS, cuBLASLt's candidates, torch.mm) at every square size the issue lists, a ragged one, and the
# model shapes M tokens x (N, K) of a transformer's projections and its LM head. Two runs, each in a
# fresh process, copied to $OUT as they end (a timed-out call keeps what finished). Run from the
# repository root with .devkit carried. SHAPES=squares or SHAPES=models runs one half. First, unless
# PROBE=0, a probe of split-K for the few-row shapes (h6's 128x64 entry splits K over gridDim.z, but
# no declared tile allows a split: `nsprof explain wave-quantization` counts 64 blocks for 132 SMs
# at 16 x 4096 x 4096), each plan verified before it is timed against the library.
source benchmarks/gpu/record_start.sh
if [ "${PROBE:-1}" = 1 ]; then
  probe() { timeout 150 python3 benchmarks/gpu/experiments/h6_plans.py --out "$OUT/h6-plans.jsonl" "$@" >> "$OUT/h6-plans.txt" 2>&1; }
  probe --sizes 3072 --plans auto,128x256@0,128x256@156,128x256@288,128x128
  probe --sizes 4096 --plans auto,128x256@116,128x256@248,128x128
  probe --sizes 2048 --plans auto,128x256,128x128,128x64
  probe --sizes 6144 --plans auto,128x256@96,128x256@228
  probe --sizes 1x4096x4096,16x4096x4096,128x4096x4096 --plans auto,128x64/2,128x64/4,128x64/8,128x256@16,128x128/2
  probe --sizes 16x14336x4096,16x4096x14336,128x4096x14336 --plans auto,128x64/2,128x64/4,128x256@56,128x256@16
  echo "plan probe ($((SECONDS - START)) s)"; cp "$OUT"/h6-plans.* "$FINAL/"
fi
SQUARES=1024,2048,3072,4096,6144,8192,3000x5000x2000
MODELS=""
for m in 1 16 128 2048 8192; do for nk in 4096x4096 14336x4096 4096x14336 128256x4096; do MODELS+="${MODELS:+,}${m}x${nk}"; done; done
declare -A SIZES=([squares]=$SQUARES [models]=$MODELS)
for half in ${SHAPES:-squares models}; do
  for run in $(seq "${RUNS:-2}"); do
    timeout 280 python3 -m nsprof bench --op hgemm --stage "${STAGES:-h6,h8}" --size "${SIZES[$half]}" \
      --save-as "$OUT/bench-hgemm-$half-run$run.json" > "$OUT/bench-hgemm-$half-run$run.txt" 2>&1
    echo "bench $half run $run exit $? ($((SECONDS - START)) s)"
    cp "$OUT/bench-hgemm-$half-run$run".* "$OUT/host.txt" "$FINAL/"
  done
done
echo "total $((SECONDS - START)) s"
