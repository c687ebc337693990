#!/usr/bin/env bash
# Does torch.mm's buffer decide h6's paired reading? In one call on one card: the GPU test that torch.mm runs on
# the arrays a later stage refreshed, then `nsprof bench` as it is (torch.mm on the stage's arrays) and as it was
# (stale_torch_bench.py: on the library stage's) in turn, RUNS times each, then pair_partners.py with all three
# kernels on one problem's buffers and with h6 on its own. Run from the repository root with .devkit carried.
source benchmarks/gpu/record_start.sh
SIZES=${SIZES:-1024,2048,4096,1x128256x4096,128x4096x14336,2048x14336x4096,2048x4096x14336}
timeout 120 python3 -m pytest -q -m gpu tests/test_gpu_stages.py -k "torch_runs_on_the_arrays" -p no:cacheprovider \
  > "$FINAL/gpu-tests.txt" 2>&1
echo "gpu test exit $? ($((SECONDS - START)) s)"; tail -2 "$FINAL/gpu-tests.txt"
for run in $(seq "${RUNS:-2}"); do
  for variant in current stale; do
    if [ $variant = current ]; then cmd=(python3 -m nsprof bench); else cmd=(python3 benchmarks/gpu/experiments/stale_torch_bench.py); fi
    timeout 200 "${cmd[@]}" --op hgemm --stage h6 --size "$SIZES" --save-as "$OUT/bench-$variant-run$run.json" \
      > "$OUT/bench-$variant-run$run.txt" 2>&1
    echo "bench $variant run $run exit $? ($((SECONDS - START)) s)"
  done
done
for mode in shared separate; do
  timeout 150 python3 benchmarks/gpu/experiments/pair_partners.py --sizes "${PAIR_SIZES:-128x4096x14336,2048x14336x4096}" \
    $([ $mode = separate ] && echo --separate) --out "$OUT/pair-partners.jsonl" > "$OUT/pair-$mode.txt" 2>&1
  echo "pair partners $mode exit $? ($((SECONDS - START)) s)"
done
tar -czf "$FINAL/results.tgz" -C "$OUT" .
cp "$OUT/host.txt" "$FINAL/"
echo "total $((SECONDS - START)) s"
