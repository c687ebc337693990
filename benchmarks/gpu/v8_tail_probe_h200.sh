#!/usr/bin/env bash
# Issue 22, third pass (one device call, about 5 minutes): the v8 GPU tests (stream-K entries);
# then benchmarks/gpu/experiments/v8_tail_probe.py twice: v8's 256x128 and 128x128 tiles with no
# tiles shared and with the last wave's tiles shared, against cuBLAS FP32 at sizes with a partial
# last wave and with whole waves, with the SM clock and power. (Earlier runs of this script timed
# sharing one more wave's tiles, slower everywhere (nsprof.ladder.ops.launch_plan.stream_k_tail), and the
# 256x128 tile in three rings before it joined v8: benchmarks/experiments/2026-11-24-h200-sgemm-tail-probe/h200-sgemm-tail-probe.json.)
# (The first run of this probe, with a prototype that split the last wave's tiles in 2-8 K slices,
# also took one launch of cuBLAS and of v8 at 8192^3 under ncu --clock-control none: see
# benchmarks/records/2026-11-24-h200-sgemm/h200-sgemm.md.)
# Run from the repository root with .devkit carried; one archive comes back in $OUT.
set -uo pipefail
source .devkit/setup.sh
export PYTHONPATH=$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1 COLUMNS=120
START=$SECONDS
FINAL=$OUT; OUT=/tmp/v8-tail; rm -rf "$OUT"; mkdir -p "$OUT"
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader; } | tee "$OUT/env.txt"
timeout 200 python3 -m pytest -q -m gpu tests/test_gpu_stages.py -k "v8" -p no:cacheprovider > "$OUT/gpu-tests.txt" 2>&1
echo "gpu tests exit $?: $(tail -1 "$OUT/gpu-tests.txt") ($((SECONDS - START)) s)"
for run in 1 2; do
  timeout 240 python3 benchmarks/gpu/experiments/v8_tail_probe.py --sizes 8192,4096,6144,8000,7680x8448x8192 \
    > "$OUT/probe-run$run.jsonl" 2> "$OUT/probe-run$run.err"
  echo "probe $run exit $? ($((SECONDS - START)) s)"
  python3 -c 'import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print("%16s %24s %5s %8.3f ms %6.2f TFLOP/s %6.1f%%  MHz %s  W %s" % (r["size"], r["variant"], r["ok"], r["ms"], r["tflops"],
          r["pct_cublas"], r["clock_mhz"], [round(w) for w in r["power_w"]]))' "$OUT/probe-run$run.jsonl"
done
tar czf "$FINAL/results.tgz" -C "$OUT" . ; echo "total $((SECONDS - START)) s"
