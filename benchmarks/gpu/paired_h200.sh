#!/usr/bin/env bash
# Issue 33's record: h6, v11 and v8 against torch.mm, paired (benchmarks/gpu/paired_vs_torch.py),
# in two separate processes (two runs), at 4096^3 and 8192^3. Run from the repository root (or
# from $SRC, a git archive of HEAD) with .devkit carried; results in $OUT.
set -uo pipefail
ROOT=$PWD
if [ -n "${SRC:-}" ]; then rm -rf /tmp/src && mkdir -p /tmp/src && tar xf "$SRC" -C /tmp/src && cd /tmp/src; fi
source "$ROOT/.devkit/setup.sh"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-} NSPROF_DATA_DIR=/tmp/nsprof-data
START=$SECONDS
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,power.limit,clocks.max.sm --format=csv
  python3 -c "import torch, cupy; print('torch', torch.__version__, 'cupy', cupy.__version__)"; } > "$OUT/host.txt" 2>&1
cat "$OUT/host.txt"
for run in 1 2; do
  timeout 200 python3 benchmarks/gpu/paired_vs_torch.py --out "$OUT/paired-run$run.jsonl" --rounds 5 \
    --stages "${STAGES:-hgemm:h6,sgemm:v11,sgemm:v8}" > "$OUT/paired-run$run.txt" 2>&1
  echo "run $run exit $? ($((SECONDS - START)) s)"
done
cat "$OUT"/paired-run*.jsonl | python3 -c "
import json,sys,collections
r=collections.defaultdict(list)
for l in sys.stdin:
    d=json.loads(l)
    if d['phase']=='paired': r[(d['op'],d['stage'],d['size'],d['tile'])].append(d['ratio'])
    else: print(d)
for k,v in r.items(): print(k, f'{min(v):.3f}-{max(v):.3f}', ' '.join(f'{x:.3f}' for x in v))"
echo "total $((SECONDS - START)) s"
