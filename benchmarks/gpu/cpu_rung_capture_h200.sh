#!/usr/bin/env bash
# Issues 33 and 34 on the GPU machine, one call: example captures with the CPU rung beside the GPU
# stages (nsprof profile with CPU stages: bench-cpu.json and ceilings-cpu.json measured in the same
# capture), their report, HGEMM h6 variants against torch.mm, and write-combined inputs for the
# 1024^3 flow. Runs the committed tree from $SRC (a git archive of HEAD, default: the working copy);
# .devkit carried; results in $OUT.
set -uo pipefail
ROOT=$PWD
if [ -n "${SRC:-}" ]; then rm -rf /tmp/src && mkdir -p /tmp/src && tar xf "$SRC" -C /tmp/src && cd /tmp/src; fi
source "$ROOT/.devkit/setup.sh"
export PYTHONUNBUFFERED=1 COLUMNS=100 PYTHONPATH=$PWD:${PYTHONPATH:-} NSPROF_DATA_DIR=/tmp/nsprof-data
START=$SECONDS; mkdir -p "$OUT/caps"
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,power.limit,clocks.max.sm --format=csv
  lscpu | grep -E "Model name|^CPU\(s\)" ; git -C "$ROOT" log -1 --format=%H 2>/dev/null; } > "$OUT/host.txt" 2>&1
cat "$OUT/host.txt"
[ "${CAPTURE:-1}" = 1 ] && timeout 260 python3 -m nsprof profile --op sgemm --size 1024 --stage v0,v0b,v0blas,v1,v6,v8,v9,v11 --out "$OUT/caps" \
  > "$OUT/profile-sgemm.txt" 2>&1; echo "sgemm profile exit $? ($((SECONDS - START)) s)"; tail -12 "$OUT/profile-sgemm.txt"
[ "${CAPTURE:-1}" = 1 ] && timeout 200 python3 -m nsprof profile --op sgemv --size 4096 --stage s0,s0b,s0blas,s1,s6,s7 --out "$OUT/caps" \
  > "$OUT/profile-sgemv.txt" 2>&1; echo "sgemv profile exit $? ($((SECONDS - START)) s)"; tail -6 "$OUT/profile-sgemv.txt"
for d in "$OUT"/caps/*/; do rm -f "$d"/nsys.nsys-rep "$d"/ncu.ncu-rep "$d"/.nsprof-written.json; done  # .sqlite, CSV serve
if [ "${CAPTURE:-1}" = 1 ]; then
  timeout 60 python3 -m nsprof analyze "$OUT"/caps/sgemm-* > "$OUT/analyze-sgemm.txt" 2>&1
  tar czf "$OUT/caps.tgz" -C "$OUT" caps && rm -rf "$OUT/caps"  # one file: the device returns few files
fi
if [ "${WC:-1}" = 1 ]; then
  timeout 120 python3 benchmarks/gpu/experiments/wc_pipeline.py --out "$OUT/wc-pipeline.jsonl" --rounds 3 \
    > "$OUT/wc-pipeline.txt" 2>&1; echo "wc exit $? ($((SECONDS - START)) s)"
fi
timeout 200 python3 benchmarks/gpu/experiments/hgemm_vs_torch.py --out "$OUT/hgemm-vs-torch.jsonl" \
  --rounds "${ROUNDS:-3}" ${PAIRED:+--paired} --only "${HGEMM_ONLY:-.}" > "$OUT/hgemm-vs-torch.txt" 2>&1; echo "hgemm exit $? ($((SECONDS - START)) s)"
grep '"phase": "time"\|"phase": "paired"' "$OUT/hgemm-vs-torch.jsonl" | python3 -c "
import json,sys,collections
r=collections.defaultdict(list)
for l in sys.stdin:
    d=json.loads(l); r[(d['size'],d['variant'])].append(d['ratio'])
for k,v in r.items(): print(k, ' '.join(f'{x:.3f}' for x in v))"
[ -f "$OUT/wc-pipeline.jsonl" ] && grep '"phase": "flow"\|copies' "$OUT/wc-pipeline.jsonl" | cut -c1-220
echo "total $((SECONDS - START)) s"
