#!/usr/bin/env bash
# Issue 60's probes of h6 plans and compile-time knobs, in one device call: the GPU tests of h6's tiles
# (TESTS=0 skips), then each probe of PROBES ("SIZES|PLANS|DEFINES|L2", one a line, DEFINES and L2 as
# h6_plans.py's --defines and --l2, may be empty), every point verified, then timed paired with torch.mm
# (AGAINST=library: the faster of it and the library's kept candidate; benchmarks/gpu/experiments/h6_plans.py). Run from the repository root with .devkit carried; the JSON
# lines of every probe land in $OUT/probes.jsonl, their tables in probes.txt.
source benchmarks/gpu/record_start.sh
if [ "${TESTS:-1}" = 1 ]; then
  timeout 200 python3 -m pytest -q -m gpu tests/test_gpu_stages.py -k "h6" -p no:cacheprovider \
    > "$OUT/gpu-tests-h6.txt" 2>&1
  echo "h6 gpu tests exit $? ($((SECONDS - START)) s)"; tail -2 "$OUT/gpu-tests-h6.txt"; cp "$OUT/gpu-tests-h6.txt" "$FINAL/"
fi
mapfile -t LIST < <(printf '%s\n' "${PROBES:-}" | grep -v '^$')
i=0
for probe in "${LIST[@]}"; do
  i=$((i + 1))
  IFS='|' read -r sizes plans defines l2 <<< "$probe"
  timeout "${PROBE_TIMEOUT:-200}" python3 benchmarks/gpu/experiments/h6_plans.py --out "$OUT/probe-$i.jsonl" \
    --sizes "$sizes" --plans "$plans" ${defines:+--defines "$defines"} ${l2:+--l2 "$l2"} --against "${AGAINST:-torch}" > "$OUT/probe-$i.txt" 2>&1
  echo "probe $i exit $? ($((SECONDS - START)) s)"
  # one file of points and one of tables, however many probes (the device returns a few files a call)
  cat "$OUT/probe-$i.jsonl" >> "$FINAL/probes.jsonl" 2>/dev/null
  { echo "# probe $i: $probe"; cat "$OUT/probe-$i.txt"; } >> "$FINAL/probes.txt"
done
cp "$OUT/host.txt" "$FINAL/"
echo "total $((SECONDS - START)) s"
