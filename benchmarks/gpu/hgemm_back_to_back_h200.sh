#!/usr/bin/env bash
# Issue 60: h6 back to back (benchmarks/gpu/experiments/back_to_back.py: chains of h6 as the launcher starts it, a
# programmatic dependent launch, of the same plan launched plainly, of torch.mm and of the library stage's kept
# cuBLASLt candidate, in turn) at the squares and model shapes of the record (benchmarks/gpu/hgemm_sizes_h200.sh),
# on cold inputs. Run from the repository root with .devkit carried. TESTS=0 skips the HGEMM ladder's GPU tests;
# SIZES replaces the sizes; COUNT and ROUNDS the script's --count and --rounds. Four files come back: the tests'
# output, the JSON lines, the log and host.txt.
source benchmarks/gpu/record_start.sh
if [ "${TESTS:-1}" = 1 ]; then
  timeout 300 python3 -m pytest -q -m gpu tests/test_gpu_stages.py tests/test_gpu_card.py -k "hgemm or h6 or card" \
    -p no:cacheprovider > "$OUT/gpu-tests-hgemm.txt" 2>&1
  echo "hgemm gpu tests exit $? ($((SECONDS - START)) s)"; tail -2 "$OUT/gpu-tests-hgemm.txt"; cp "$OUT/gpu-tests-hgemm.txt" "$FINAL/"
fi
MODELS=""
for m in 1 16 128 2048 8192; do for nk in 4096x4096 14336x4096 4096x14336 128256x4096; do MODELS+="${MODELS:+,}${m}x${nk}"; done; done
for part in squares models; do
  sizes=${SIZES:-$([ $part = squares ] && echo 1024,2048,3072,4096,6144,8192,3000x5000x2000 || echo "$MODELS")}
  timeout 280 python3 benchmarks/gpu/experiments/back_to_back.py --sizes "$sizes" --cold --count "${COUNT:-32}" \
    --rounds "${ROUNDS:-5}" --out "$OUT/back-to-back.jsonl" >> "$OUT/back-to-back.txt" 2>&1
  echo "back to back $part exit $? ($((SECONDS - START)) s)"; cp "$OUT"/back-to-back.* "$OUT/host.txt" "$FINAL/"
  [ -n "${SIZES:-}" ] && break
done
echo "total $((SECONDS - START)) s"
