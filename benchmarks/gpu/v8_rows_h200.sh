#!/usr/bin/env bash
# Issue 22 (one device call, about 4 minutes): v8 with V8_ASYNC=3 (A read as it is: no transpose
# kernel) verified at square, ragged and extreme sizes with every tile forced, split 1 and 2, then
# timed against v8 (A transposed first) and cuBLAS FP32 by benchmarks/gpu/experiments/v8_tail_probe.py.
# Run from the repository root with .devkit carried; one archive comes back in $OUT.
set -uo pipefail
source .devkit/setup.sh
export PYTHONPATH=$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1 COLUMNS=120
START=$SECONDS
FINAL=$OUT; OUT=/tmp/v8-rows; rm -rf "$OUT"; mkdir -p "$OUT"
P=benchmarks/gpu/experiments/v8_tail_probe.py
date -u | tee "$OUT/env.txt"
timeout 150 python3 $P --rows --verify 17x33x9,1x1x1,4095x4097x4093,1000x1200x800,129x7x300,128x4096x1024,4096x128x1024,1024,2048x4096x264 \
  > "$OUT/verify.jsonl" 2> "$OUT/verify.err"
echo "verify exit $?: $(wc -l < "$OUT/verify.jsonl") points, $(grep -c '"ok": false' "$OUT/verify.jsonl") failed ($((SECONDS - START)) s)"
grep '"ok": false' "$OUT/verify.jsonl" | head -5; tail -3 "$OUT/verify.err"
timeout 300 python3 $P --rows --tiles 256x128,128x128 --rounds 2 --sizes 8192,4096,1024,1000x1200x800,1024x1280x768,3072 \
  > "$OUT/probe.jsonl" 2> "$OUT/probe.err"; echo "probe exit $? ($((SECONDS - START)) s)"; tail -3 "$OUT/probe.err"
python3 -c 'import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print("%16s %26s %5s %8.4f ms %6.2f TFLOP/s %6.1f%%  MHz %s" % (r["size"], r["variant"], r["ok"], r["ms"], r["tflops"],
          r["pct_cublas"], r["clock_mhz"]))' "$OUT/probe.jsonl"
tar czf "$FINAL/results.tgz" -C "$OUT" . ; echo "total $((SECONDS - START)) s"
