#!/usr/bin/env bash
# Issue 60: h6 with H6_EARLY_ISSUE=1 (thread 0 issues the ring's first pass before the block's barrier and the
# producer's setmaxnreg) against h6 as declared, in one device call: every size verified against the float64
# reference before it is timed (back_to_back.py --variant: pairs and chains, both orders, cold inputs), ragged and
# decode shapes among them; then the tile clocks of a block's start with and without it. First, the ladder's GPU
# tests with h6 as declared (the producer's loop became a lambda: the declared kernels' SASS changed). Run from the
# repository root with .devkit carried. Files: gpu-tests.txt, variant.jsonl, timeline.jsonl, log.txt, host.txt.
source benchmarks/gpu/record_start.sh
X=benchmarks/gpu/experiments
VARIANT=${VARIANT:-H6_EARLY_ISSUE=1}
timeout 150 python3 -m pytest -q -m gpu tests/test_gpu_stages.py tests/test_gpu_card.py -k 'hgemm or h6 or card' \
  -p no:cacheprovider > "$OUT/gpu-tests.txt" 2>&1; echo "gpu tests exit $? ($((SECONDS - START)) s)" | tee -a "$OUT/gpu-tests.txt"
tail -3 "$OUT/gpu-tests.txt"
{
timeout 300 python3 $X/back_to_back.py --variant "$VARIANT" --cold --rounds 5 --out "$OUT/variant.jsonl" \
  --sizes "${SIZES:-1024,2048,512x2048x1024,1x4096x4096,16x4096x4096,1x4096x14336,128x4096x4096,2048x14336x4096,3072,4096,8192,1000x1200x808,3000x5000x2000,2000x1800x1000}"
echo "variant exit $? ($((SECONDS - START)) s)"
timeout 120 python3 $X/h6_timeline.py --cold --sizes 1024,2048,16x4096x4096 --defines "${VARIANT%%=*}=0,${VARIANT#*=}" \
  --out "$OUT/timeline.jsonl"
echo "timeline exit $? ($((SECONDS - START)) s)"
} > "$OUT/log.txt" 2>&1
cp "$OUT"/{gpu-tests.txt,variant.jsonl,timeline.jsonl,log.txt,host.txt} "$FINAL/" 2>/dev/null
grep -v '^{' "$OUT/log.txt" | tail -20
python3 -c "
import json
for l in open('$OUT/variant.jsonl'):
    r = json.loads(l); print(r['size'], r['h6'], {k: round(v, 2) for k, v in r['variant_pct'].items()})
"
echo "total $((SECONDS - START)) s"
