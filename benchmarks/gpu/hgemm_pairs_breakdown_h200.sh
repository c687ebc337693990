#!/usr/bin/env bash
# Issue 60: where the pairs' time goes at the sizes h6 trails by a point or two, in one device call, on cold inputs.
#  1. h6 built with VARIANT (compile definitions, A=1;B=2; default H6_EARLY_PREFETCH=1) against h6 as declared, both
#     orders, in pairs and in chains (back_to_back.py --variant) at VARIANT_SIZES;
#  2. tile clocks (h6_timeline.py --cold) at 1024^3 and 2048^3 with and without the variant;
#  3. h6 paired with each library as nsprof bench pairs (back_to_back.py --pairs), then the same under nsys, and
#     the export broken down per kernel (duration, gap before it) at PAIR_SIZES;
#  4. PLANS probed at 1024^3 against the faster library (h6_plans.py).
# Run from the repository root with .devkit carried. Files: variant.jsonl, timeline.jsonl, pairs.jsonl,
# pairs-nsys.txt (the breakdown), probes.jsonl, log.txt, host.txt.
source benchmarks/gpu/record_start.sh
VARIANT=${VARIANT:-H6_EARLY_PREFETCH=1}
X=benchmarks/gpu/experiments
{
timeout 200 python3 $X/back_to_back.py --variant "$VARIANT" --cold --rounds 5 --out "$OUT/variant.jsonl" \
  --sizes "${VARIANT_SIZES:-1024,2048,512x2048x1024,1x4096x4096,16x4096x4096,128x4096x4096,1x128256x4096,4096}"
echo "variant exit $? ($((SECONDS - START)) s)"
timeout 120 python3 $X/h6_timeline.py --cold --sizes 1024,2048 --defines "${VARIANT%%=*}=0,${VARIANT#*=}" \
  --out "$OUT/timeline.jsonl"
echo "timeline exit $? ($((SECONDS - START)) s)"
timeout 120 python3 $X/back_to_back.py --pairs --cold --sizes "${PAIR_SIZES:-1024,2048}" --out "$OUT/pairs.jsonl"
echo "pairs exit $? ($((SECONDS - START)) s)"
timeout 200 nsys profile -t cuda -f true -o "$OUT/pairs" python3 $X/back_to_back.py --pairs --cold \
  --sizes "${PAIR_SIZES:-1024,2048}" --out "$OUT/pairs-under-nsys.jsonl"
echo "nsys exit $? ($((SECONDS - START)) s)"
nsys export --type sqlite -f true -o "$OUT/pairs.sqlite" "$OUT/pairs.nsys-rep" > /dev/null 2>&1
{ cat "$OUT/pairs-under-nsys.jsonl"; python3 $X/back_to_back.py --analyze "$OUT/pairs.sqlite"; } > "$OUT/pairs-nsys.txt" 2>&1
echo "analyze exit $? ($((SECONDS - START)) s)"
timeout 150 python3 $X/h6_plans.py --sizes 1024 --plans "${PLANS:-auto,hgemm_h6_split_128x128/2}" --against library \
  --out "$OUT/probes.jsonl"
echo "probes exit $? ($((SECONDS - START)) s)"
} > "$OUT/log.txt" 2>&1
cp "$OUT"/{variant.jsonl,timeline.jsonl,pairs.jsonl,pairs-nsys.txt,probes.jsonl,log.txt,host.txt} "$FINAL/" 2>/dev/null
tail -40 "$OUT/log.txt"
echo "total $((SECONDS - START)) s"
