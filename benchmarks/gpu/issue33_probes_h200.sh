#!/usr/bin/env bash
# Issue 33's probes of 2026-11-26 (afternoon): whether a host-to-device copy fills its buffer front to back
# (benchmarks/gpu/experiments/copy_landing.py), and h6 in clusters of two with TMA stores of C, paired with
# h6 as declared and torch.mm (h6_cl2_tma.py). Run from the repository root with .devkit carried; one
# archive, results.tgz, comes back in $OUT.
set -uo pipefail
source .devkit/setup.sh
export PYTHONUNBUFFERED=1 COLUMNS=160 PYTHONPATH=$PWD:${PYTHONPATH:-} NSPROF_DATA_DIR=/tmp/nsprof-data
FINAL=$OUT; OUT=/tmp/record; rm -rf "$OUT"; mkdir -p "$OUT"
START=$SECONDS
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,power.limit,clocks.max.sm --format=csv
  python3 -c "import torch, cupy; print('torch', torch.__version__, 'cupy', cupy.__version__)"; } > "$OUT/host.txt" 2>&1
cat "$OUT/host.txt"
timeout 60 python3 benchmarks/gpu/experiments/copy_landing.py --out "$OUT/copy-landing.jsonl" > "$OUT/copy-landing.txt" 2>&1
echo "copy landing exit $? ($((SECONDS - START)) s)"; cat "$OUT/copy-landing.txt" | cut -c1-250
for run in 1 2; do
  timeout 200 python3 benchmarks/gpu/experiments/h6_cl2_tma.py --out "$OUT/h6-cl2-tma-run$run.jsonl" --rounds 3 \
    > "$OUT/h6-cl2-tma-run$run.txt" 2>&1
  echo "cl2 tma run $run exit $? ($((SECONDS - START)) s)"; grep -E "ok=False|message|paired" "$OUT/h6-cl2-tma-run$run.txt" | cut -c1-250
done
tar czf "$FINAL/results.tgz" -C "$OUT" . ; echo "total $((SECONDS - START)) s"
