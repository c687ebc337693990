#!/usr/bin/env bash
# Issue 60's probes of h6 plans and compile-time knobs, in one device call: the GPU tests of h6's tiles
# (TESTS=0 skips), then each probe of PROBES ("SIZES|PLANS|DEFINES" separated by ";", DEFINES as
# h6_plans.py's --defines, may be empty), every point verified, then timed paired with torch.mm
# (AGAINST=library: the faster of it and the library's kept candidate; benchmarks/gpu/experiments/h6_plans.py). Run from the repository root with .devkit carried; the JSON
# lines of probe i land in $OUT/probe-i.jsonl, its table in probe-i.txt.
source benchmarks/gpu/record_start.sh
if [ "${TESTS:-1}" = 1 ]; then
  timeout 200 python3 -m pytest -q -m gpu tests/test_gpu_stages.py -k "h6" -p no:cacheprovider \
    > "$OUT/gpu-tests-h6.txt" 2>&1
  echo "h6 gpu tests exit $? ($((SECONDS - START)) s)"; tail -2 "$OUT/gpu-tests-h6.txt"; cp "$OUT/gpu-tests-h6.txt" "$FINAL/"
fi
IFS=';' read -ra LIST <<< "${PROBES:-}"
i=0
for probe in "${LIST[@]}"; do
  i=$((i + 1))
  IFS='|' read -r sizes plans defines <<< "$probe"
  timeout "${PROBE_TIMEOUT:-200}" python3 benchmarks/gpu/experiments/h6_plans.py --out "$OUT/probe-$i.jsonl" \
    --sizes "$sizes" --plans "$plans" ${defines:+--defines "$defines"} --against "${AGAINST:-torch}" > "$OUT/probe-$i.txt" 2>&1
  echo "probe $i exit $? ($((SECONDS - START)) s)"; cp "$OUT/probe-$i.jsonl" "$OUT/probe-$i.txt" "$FINAL/" 2>/dev/null
done
cp "$OUT/host.txt" "$FINAL/"
echo "total $((SECONDS - START)) s"
