#!/bin/bash
# Issue 22, fp32 SIMT: check v8's defaults (kernels/sgemm/v08_double_buffering.cu: BK 16 staged in
# two parts, an unchecked entry for whole tiles) on the H200 in one short device call (< 3 min).
#   bash benchmarks/gpu/sgemm_fp32_check_h200.sh        (JSON lines and the table land in $OUT)
# 1. verify the defaults at the issue's shapes (ragged, extreme, whole tiles with and without a
#    short K slice) with the automatic plan and forced ones: checked and unchecked entries;
# 2. time v8 against cuBLAS fp32 (tune_stage.py) at 1024^3, 4096^3, 8192^3 and 1000x1200x800 with
#    the automatic plan and a few alternatives: V8_BK=8 (the old depth, unchecked at whole tiles),
#    V8_TN=16, V8_SWIZZLE=8, and at the ragged size the cp.async path that led the first sweep;
# 3. % of cuBLAS per size, plan, knobs and entry.
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f .devkit/setup.sh ] && source .devkit/setup.sh
export PYTHONPATH=$PWD:${PYTHONPATH:-}
T="python3 benchmarks/gpu/tune_stage.py --stage v8"
START=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader

echo "== 1. verify the defaults"
timeout 60 $T --verify-only --sizes 17x33x9,1x1x1,1000x1200x800,4095x4097x4093,128x4096x1024,4096x128x1024,1024,512x512x528 \
  --plans auto,128x128/1,128x128/4,64x128/2,64x64/1 2>"$OUT/verify.err" | grep '^{' > "$OUT/verify.jsonl"
n=$(wc -l < "$OUT/verify.jsonl"); bad=$(grep -vc '"ok": true' "$OUT/verify.jsonl")
echo "$n points, $bad failed; entries: $(grep -o '"entry": "[a-z0-9_]*"' "$OUT/verify.jsonl" | sort | uniq -c | tr -s ' \n' ' ')"
[ "$bad" -ne 0 ] && { grep -v '"ok": true' "$OUT/verify.jsonl" | head -5; tail -3 "$OUT/verify.err"; }
echo "($((SECONDS - START)) s)"

echo "== 2. time"
time_v8() {  # sizes plans [--knobs ...]
  local sizes=$1 plans=$2; shift 2
  timeout 100 $T --sizes "$sizes" --plans "$plans" --knobs "" "$@" 2>>"$OUT/time.err" | grep '^{' >> "$OUT/time.jsonl"
  echo "  $sizes done ($((SECONDS - START)) s)"
}
time_v8 1024 auto,128x128/2,64x128/2 --knobs "V8_BK=8"
time_v8 4096 auto --knobs "V8_BK=8" --knobs "V8_TN=16"
time_v8 8192 auto --knobs "V8_BK=8" --knobs "V8_SWIZZLE=8"
time_v8 1000x1200x800 auto,128x128/4,64x128/2 --knobs "V8_BK=8" --knobs "V8_ASYNC=1;V8_STAGES=2;V8_BK=8"

echo "== 3. % of cuBLAS fp32 (v9), every point; all in $OUT/time.jsonl"
python3 - "$OUT/time.jsonl" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print(f"{'size':>15} {'plan':>18} {'knobs':>28} {'entry':>27} {'TFLOP/s':>8} {'%cuBLAS':>8}")
for r in rows:
    if not r["ok"]:
        print(f"{r['size']:>15} {r['plan']:>18} {r['knobs'] or 'defaults':>28}  FAILED {r.get('error', r['err'])}")
        continue
    print(f"{r['size']:>15} {r['plan']:>18} {r['knobs'] or 'defaults':>28} {r['entry']:>27} {r['tflops']:>8.2f} {r['pct_cublas']:>7.1f}%")
PY
echo "errors logged: $(cat "$OUT"/*.err | wc -l) lines; total $((SECONDS - START)) s"
