#!/usr/bin/env bash
# Issue 60: h6's block start and end, in one device call. The ladder's GPU tests with h6 as declared (the ping-pong
# body's last tile staging C in the ring, H6_RING_STAGING=1), then each variant of VARIANTS (one a line, as
# back_to_back.py --variant takes them; call 6 of benchmarks/records/2026-12-01-h200-hgemm-block-start ran knobs that
# its start-variants.diff adds) against h6 as declared: verified, then paired and chained, both orders, on
# cold inputs. Run from the repository root with .devkit carried. Files: gpu-tests.txt, variants.jsonl, log.txt,
# host.txt.
source benchmarks/gpu/record_start.sh
X=benchmarks/gpu/experiments
timeout 150 python3 -m pytest -q -m gpu tests/test_gpu_stages.py tests/test_gpu_card.py -k 'hgemm or h6 or card' \
  -p no:cacheprovider > "$OUT/gpu-tests.txt" 2>&1; echo "gpu tests exit $? ($((SECONDS - START)) s)" | tee -a "$OUT/gpu-tests.txt"
tail -2 "$OUT/gpu-tests.txt"
SIZES=${SIZES:-1024,512x2048x1024,1x4096x4096,16x4096x4096,128x4096x4096,2048,2000x1800x1000,1000x1200x808}
mapfile -t LIST < <(printf '%s\n' "${VARIANTS:-H6_EARLY_ISSUE=1}" | grep -v '^$')
for variant in "${LIST[@]}"; do
  timeout 200 python3 $X/back_to_back.py --variant "$variant" --cold --rounds 5 --out "$OUT/variants.jsonl" --sizes "$SIZES" \
    >> "$OUT/log.txt" 2>&1
  echo "variant $variant exit $? ($((SECONDS - START)) s)"
done
cp "$OUT"/{gpu-tests.txt,variants.jsonl,log.txt,host.txt} "$FINAL/" 2>/dev/null
python3 -c "
import json
for l in open('$OUT/variants.jsonl'):
    r = json.loads(l); print(r['variant'] if 'variant' in r else '', r['size'], r['h6'], {k: round(v, 2) for k, v in r['variant_pct'].items()})
"
