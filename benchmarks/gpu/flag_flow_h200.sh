#!/usr/bin/env bash
# Issue 33's 1024^3 flow handed over by flags (benchmarks/gpu/experiments/flag_flow.py): verified and timed
# beside the bus alone and cuBLAS's event-linked row-block flows, in interleaved rounds, in two processes;
# then `nsprof pipeline --size 1024 --no-cold --no-nsys` for the CLI's own numbers on the same machine, and
# one short run under nsys (the flows' timeline). Run from the repository root with .devkit carried; one
# archive, results.tgz, comes back in $OUT.
set -uo pipefail
source .devkit/setup.sh
export PYTHONUNBUFFERED=1 COLUMNS=160 PYTHONPATH=$PWD:${PYTHONPATH:-} NSPROF_DATA_DIR=/tmp/nsprof-data
FINAL=$OUT; OUT=/tmp/record; rm -rf "$OUT"; mkdir -p "$OUT"
START=$SECONDS
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,power.limit,clocks.max.sm,pcie.link.gen.current,pcie.link.width.current --format=csv
  python3 -c "import torch, cupy; print('torch', torch.__version__, 'cupy', cupy.__version__)"; } > "$OUT/host.txt" 2>&1
cat "$OUT/host.txt"
for run in 1 2; do
  timeout 150 python3 benchmarks/gpu/experiments/flag_flow.py --out "$OUT/flag-flow-run$run.jsonl" --rounds ${ROUNDS:-4} \
    > "$OUT/flag-flow-run$run.txt" 2>&1
  echo "flag flow run $run exit $? ($((SECONDS - START)) s)"
done
grep -h '"ok": false' "$OUT"/flag-flow-run*.jsonl | cut -c1-300
cat "$OUT"/flag-flow-run*.jsonl | python3 -c "
import json,sys,collections
r=collections.defaultdict(list)
for l in sys.stdin:
    d=json.loads(l)
    if d['phase']=='time': r[(d['flow'],d['kind'])].append(d['median_ms'])
for k,v in r.items(): print(f'{k[0]:<44} {k[1]:<8} {min(v):.4f}-{max(v):.4f} ms ({len(v)})')"
timeout 120 python3 -m nsprof pipeline --size 1024 --no-cold --no-nsys > "$OUT/pipeline-1024.txt" 2>&1
echo "pipeline exit $? ($((SECONDS - START)) s)"; tail -n 20 "$OUT/pipeline-1024.txt"
if [ "${NSYS:-1}" = 1 ]; then
  timeout 150 nsys profile -t cuda,nvtx -o "$OUT/flag-flow" --force-overwrite true --export sqlite \
    python3 benchmarks/gpu/experiments/flag_flow.py --out "$OUT/flag-flow-nsys.jsonl" --rounds 1 --repeat 20 \
    > "$OUT/flag-flow-nsys.txt" 2>&1
  echo "nsys exit $? ($((SECONDS - START)) s)"; ls -la "$OUT"
fi
tar czf "$FINAL/results.tgz" -C "$OUT" . ; echo "total $((SECONDS - START)) s"
