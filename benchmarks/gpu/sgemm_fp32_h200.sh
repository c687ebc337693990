#!/bin/bash
# Issue 22, fp32 SIMT: sweep v8's knobs (kernels/sgemm/v08_double_buffering.cu) x launch plans on
# the H200 against cuBLAS fp32, in one device call of about 5 minutes (budget: under 8).
#   bash benchmarks/gpu/sgemm_fp32_h200.sh        (JSON lines and the tables land in $OUT)
# 1. every knob variant is verified (no timing) at ragged and extreme shapes, with the automatic
#    plan, the 128x128 tile alone and split in 4 (short and empty K slices), one process per
#    variant (a kernel fault ends only its own variant); a variant that fails anywhere is dropped;
# 2. the survivors are verified and timed by benchmarks/gpu/tune_stage.py at 4096^3, 8192^3, 1024^3
#    and 1000x1200x800 (several plans where the grid is small), plus the padding-vs-bounds-check
#    comparison at the ragged sizes and the L2 tile-order knob at 8192^3;
# 3. a table per variant: % of cuBLAS fp32 at each size (best plan), then every plan at the
#    small sizes.
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f .devkit/setup.sh ] && source .devkit/setup.sh
export PYTHONPATH=$PWD:${PYTHONPATH:-}
T="python3 benchmarks/gpu/tune_stage.py --stage v8"
START=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader

# Knob variants (";" separates knobs). Defaults when this sweep ran (2026-11-24): register-staged
# double buffer, 8x8 outputs per thread, BK 8, 2 blocks per SM, bounds checks on every launch. The
# defaults it chose (BK 16, unchecked entries for whole tiles) are checked by sgemm_fp32_check_h200.sh;
# "" here now means those.
VARIANTS=(
  ""
  "V8_BK=16"
  "V8_TN=16"
  "V8_TN=16;V8_BK=16"
  "V8_TN=16;V8_MIN_BLOCKS=3"
  "V8_ASYNC=1;V8_STAGES=2"
  "V8_ASYNC=1;V8_STAGES=3"
  "V8_ASYNC=1;V8_STAGES=4"
  "V8_ASYNC=1;V8_TN=16;V8_STAGES=3"
  "V8_ASYNC=1;V8_TN=16;V8_STAGES=4"
  "V8_ASYNC=1;V8_TN=16;V8_BK=16;V8_STAGES=2"
)
CHECK=17x33x9,1x1x1,1000x1200x800,4095x4097x4093,128x4096x1024,4096x128x1024,1024

echo "== 1. verify every variant at $CHECK"
GOOD=()
for v in "${VARIANTS[@]}"; do
  timeout 90 $T --verify-only --sizes $CHECK --plans auto,128x128/1,128x128/4 --knobs "$v" 2>"$OUT/verify.err" \
    | grep '^{' > "$OUT/verify.part"
  n=$(wc -l < "$OUT/verify.part"); bad=$(grep -c '"ok": false' "$OUT/verify.part")
  cat "$OUT/verify.part" >> "$OUT/verify.jsonl"
  if [ "$n" -eq 21 ] && [ "$bad" -eq 0 ]; then GOOD+=("$v"); echo "ok    [${v:-defaults}]"
  else echo "FAIL  [${v:-defaults}] $n points, $bad failed: $(grep -v '"ok": true' "$OUT/verify.part" | head -2) $(tail -2 "$OUT/verify.err")"
  fi
done
rm -f "$OUT/verify.part" "$OUT/verify.err"
echo "($((SECONDS - START)) s)"
[ ${#GOOD[@]} -eq 0 ] && { echo "no variant verified"; exit 1; }
KNOBS=(); for v in "${GOOD[@]}"; do KNOBS+=(--knobs "$v"); done

sweep() {  # sizes plans [extra tune_stage args...]
  local sizes=$1 plans=$2; shift 2
  timeout 150 $T --sizes "$sizes" --plans "$plans" "$@" 2>>"$OUT/sweep.err" | grep '^{' | tee -a "$OUT/sweep.jsonl" \
    | python3 -c 'import json, sys
for line in sys.stdin:
    r = json.loads(line)
    print("  %14s %18s %40s %7.2f TFLOP/s %6.1f%%" % (r["size"], r["plan"], r["knobs"] or "defaults", r["tflops"], r["pct_cublas"]))'
  echo "  ($((SECONDS - START)) s)"
}
echo "== 2. time"
sweep 4096 auto "${KNOBS[@]}"
sweep 1024 128x128/2,128x128/4,64x128/2 "${KNOBS[@]}"
sweep 1000x1200x800 auto,128x128/1,128x128/4,64x128/1,64x128/2 "${KNOBS[@]}"
sweep 8192 auto "${KNOBS[@]}"
# Before/after for the ragged sizes: V8_PAD=1 is what v8 did before (padding copies); the same
# kernel either way. And the L2-friendly block order at 8192^3.
sweep 1000x1200x800,4095x4097x4093 auto --knobs "V8_PAD=0,1" --knobs "V8_TN=16;V8_PAD=0,1"
sweep 8192 auto --knobs "V8_SWIZZLE=4,8,16" --knobs "V8_TN=16;V8_SWIZZLE=8"

echo "== 3. % of cuBLAS fp32 (best plan per size; all points in $OUT/sweep.jsonl)"
python3 - "$OUT/sweep.jsonl" <<'EOF'
import json, math, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
rows = [r for r in rows if not math.isnan(r["pct_cublas"])]
sizes = ["1024x1024x1024", "4096x4096x4096", "8192x8192x8192", "1000x1200x800", "4095x4097x4093"]
knobs = list(dict.fromkeys(r["knobs"] for r in rows))


def plan(label):  # "128x128x8/split4" -> "128x128/4"
    shape, _, split = label.partition("/split")
    return shape.rsplit("x", 1)[0] + "/" + (split or "1")


print(f"{'knobs':<40}" + "".join(f"{s if s.count(s[:4]) < 3 else s[:4] + '^3':>17}" for s in sizes))
for k in knobs:
    cells = []
    for s in sizes:
        best = max((r for r in rows if r["knobs"] == k and r["size"] == s), key=lambda r: r["pct_cublas"], default=None)
        cells.append(f"{best['pct_cublas']:5.1f}% {plan(best['plan'])}" if best else "")
    print(f"{k or 'defaults':<40}" + "".join(f"{c:>17}" for c in cells))
print("\nsmall grids, every plan (% of cuBLAS):")
for s in ("1024x1024x1024", "1000x1200x800"):
    plans = list(dict.fromkeys(plan(r["plan"]) for r in rows if r["size"] == s))
    print(f"{s:<40}" + "".join(f"{p:>11}" for p in plans))
    for k in knobs:
        by_plan = {plan(r["plan"]): r["pct_cublas"] for r in rows if r["size"] == s and r["knobs"] == k}
        if by_plan:
            print(f"  {k or 'defaults':<38}" + "".join(f"{by_plan[p]:>11.1f}" if p in by_plan else f"{'':>11}" for p in plans))
EOF
echo "errors logged: $(wc -l < "$OUT/sweep.err") lines in sweep.err; total $((SECONDS - START)) s"
