#!/usr/bin/env bash
# Issue 22, second pass on the H200 (one device call, about 8 minutes): the ragged paths of v10
# (cp.async zero fill) and h6 (TMA zero fill) verified by the GPU tests of every SGEMM and HGEMM
# stage; v8's V8_ASYNC=2 (A transposed first, both tiles by 16-byte cp.async) verified at ragged and
# extreme shapes, then v8's variants and launch plans timed against cuBLAS FP32
# (benchmarks/gpu/tune_stage.py); the TF32 stages and h6 benchmarked at the ragged sizes and their
# nearest aligned ones, twice. Run from the repository root with .devkit carried; results in $OUT.
set -uo pipefail
source .devkit/setup.sh
export PYTHONPATH=$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1 COLUMNS=120
START=$SECONDS
FINAL=$OUT; OUT=/tmp/sgemm-peak; rm -rf "$OUT"; mkdir -p "$OUT"  # one archive comes back (see the end)
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader; } | tee "$OUT/env.txt"
echo "== gpu tests (sgemm, hgemm)"
timeout 240 python3 -m pytest -q -m gpu tests/test_gpu_stages.py -k "sgemm or hgemm or h6 or v10 or v8 or v11" -p no:cacheprovider \
  > "$OUT/gpu-tests.txt" 2>&1; echo "exit $?"; tail -4 "$OUT/gpu-tests.txt"; echo "($((SECONDS - START)) s)"

T="python3 benchmarks/gpu/tune_stage.py --stage v8"
CHECK=17x33x9,1x1x1,1000x1200x800,4095x4097x4093,128x4096x1024,4096x128x1024,1024
echo "== verify v8 variants at $CHECK"
for v in "V8_ASYNC=2;V8_BK=8;V8_STAGES=3" "V8_ASYNC=2;V8_BK=8;V8_STAGES=4" "V8_ASYNC=2;V8_BK=16;V8_STAGES=2" \
         "V8_ASYNC=2;V8_BK=8;V8_STAGES=3;V8_TN=16" "V8_BK=8;V8_SWIZZLE=8"; do
  timeout 90 $T --verify-only --sizes $CHECK --plans auto,128x128/1,128x128/4 --knobs "$v" 2>>"$OUT/verify.err" \
    | grep '^{' > "$OUT/part.jsonl"
  echo "[$v] $(wc -l < "$OUT/part.jsonl") points, $(grep -c '"ok": false' "$OUT/part.jsonl") failed"
  cat "$OUT/part.jsonl" >> "$OUT/verify.jsonl"
done
echo "($((SECONDS - START)) s)"

sweep() {  # sizes plans [tune_stage args...]
  local sizes=$1 plans=$2; shift 2
  timeout 200 $T --sizes "$sizes" --plans "$plans" "$@" 2>>"$OUT/sweep.err" | grep '^{' | tee -a "$OUT/sweep.jsonl" \
    | python3 -c 'import json, sys
for line in sys.stdin:
    r = json.loads(line)
    print("  %14s %18s %40s %7.2f TFLOP/s %6.1f%%" % (r["size"], r["plan"], r["knobs"] or "defaults", r["tflops"], r["pct_cublas"]))'
  echo "  ($((SECONDS - START)) s)"
}
echo "== time v8"
sweep 4096,8192 auto --knobs "" --knobs "V8_BK=8" --knobs "V8_BK=8;V8_SWIZZLE=8" --knobs "V8_ASYNC=2;V8_BK=8;V8_STAGES=3,4" \
  --knobs "V8_ASYNC=2;V8_BK=16;V8_STAGES=2" --knobs "V8_ASYNC=2;V8_BK=8;V8_STAGES=4;V8_SWIZZLE=8" \
  --knobs "V8_ASYNC=2;V8_BK=16;V8_STAGES=2;V8_SWIZZLE=8" --knobs "V8_ASYNC=2;V8_BK=16;V8_STAGES=2;V8_TN=16" \
  --knobs "V8_ASYNC=2;V8_BK=8;V8_STAGES=3;V8_TN=16"
for rep in 1 2; do
  sweep 1024,1000x1200x800,1024x1280x768 auto,128x128/1,128x128/2,128x128/4,64x128/1,64x128/2,64x128/4,64x64/2 \
    --knobs "" --knobs "V8_BK=8" --knobs "V8_ASYNC=2;V8_BK=8;V8_STAGES=4" --knobs "V8_ASYNC=2;V8_BK=16;V8_STAGES=2"
done

echo "== TF32 stages and h6, ragged and aligned, twice"
for run in 1 2; do
  timeout 120 python3 -m nsprof bench --op sgemm --stage v9t,v10,v11 --size 1000x1200x800,1000x1200x808,1024x1280x768,4096 \
    --repeat 200 --save-as "$OUT/bench-tf32-run$run.json" > "$OUT/bench-tf32-run$run.txt" 2>&1; echo "exit $?"
  timeout 120 python3 -m nsprof bench --op hgemm --stage h6,h7 --size 1000x1200x808,1024x1280x768,4096 \
    --repeat 200 --save-as "$OUT/bench-h6-run$run.json" > "$OUT/bench-h6-run$run.txt" 2>&1; echo "exit $?"
done
tail -n 14 "$OUT/bench-tf32-run1.txt" "$OUT/bench-h6-run1.txt"
rm -f "$OUT/part.jsonl"
tar czf "$FINAL/results.tgz" -C "$OUT" . ; echo "total $((SECONDS - START)) s"
