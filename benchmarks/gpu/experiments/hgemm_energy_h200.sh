#!/usr/bin/env bash
# Issue 60: how much each h6 plan costs in energy at the power limit, and how it pairs with the library. For each
# size of SIZES, clocks_under_load.py runs each kernel of KERNELS alone (PHASE_S seconds of back-to-back launches,
# CYCLES times in turn; the SM clock and power sampled, NVML's energy counter read) into $OUT/clocks-<size>.json;
# then h6_plans.py pairs each h6 plan of PLANS with the library (AGAINST) at every size, twice, in both orders,
# into $OUT/probes.jsonl. Run from the repository root with .devkit carried.
source benchmarks/gpu/record_start.sh
for size in ${SIZES:-2048 2048x14336x4096}; do
  timeout 200 python3 benchmarks/gpu/experiments/clocks_under_load.py --out "$OUT/clocks-$size.json" --size "$size" \
    --kernels "${KERNELS:-library,h6}" --no-in-turn --cycles "${CYCLES:-2}" --phase-s "${PHASE_S:-2}" > "$OUT/clocks-$size.txt" 2>&1
  echo "clocks $size exit $? ($((SECONDS - START)) s)"; grep -v "^{'phase'" "$OUT/clocks-$size.txt" | tail -12
  python3 - "$OUT/clocks-$size.json" <<'PY'
import json, sys
for p in json.load(open(sys.argv[1]))["phases"]:
    ms = next(v for k, v in p.items() if k.endswith("_median_ms"))
    print(f"{p['phase'][:60]:60} {ms * 1e3:9.2f} us {p['sm_clock_mhz']} MHz {p['power_w']} W "
          f"{p['mj_per_launch'] and round(p['mj_per_launch'], 3)} mJ")
PY
done
cat "$OUT"/clocks-*.txt > "$FINAL/clocks.txt"; for f in "$OUT"/clocks-*.json; do cp "$f" "$FINAL/"; done
if [ -n "${PLANS:-}" ]; then
  for order in 1 2; do
    plans=$PLANS; [ $order = 2 ] && plans=$(echo "$PLANS" | tr ',' '\n' | tac | paste -sd,)
    timeout "${PROBE_TIMEOUT:-240}" python3 benchmarks/gpu/experiments/h6_plans.py --out "$FINAL/probes.jsonl" \
      --sizes "${PROBE_SIZES:-${SIZES// /,}}" --plans "$plans" --against "${AGAINST:-library}" > "$OUT/probe-$order.txt" 2>&1
    echo "probe order $order exit $? ($((SECONDS - START)) s)"; grep -v '^{' "$OUT/probe-$order.txt" | tail -30
  done
fi
cp "$OUT/host.txt" "$FINAL/"
echo "total $((SECONDS - START)) s"
