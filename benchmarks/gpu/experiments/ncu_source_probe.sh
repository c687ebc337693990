#!/usr/bin/env bash
# Issue 60: where h6's instructions go. One h6 kernel per size (its first launch: the plan's verification) under
# ncu's SourceCounters section, exported per SASS instruction (executed count, warp stalls) to
# $OUT/sass-<size>.csv, so spin loops, the k loop and the epilogue can be told apart. Run from the repository root
# with .devkit carried. SIZES and PLANS as in h6_plans.py (benchmarks/gpu/experiments/).
source benchmarks/gpu/record_start.sh
for size in ${SIZES:-2048 3000x5000x2000}; do
  timeout 150 ncu -f -k 'regex:hgemm_h6' -c 1 --section SourceCounters -o /tmp/src-$size \
    python3 benchmarks/gpu/experiments/h6_plans.py --sizes $size --plans ${PLANS:-auto} --against torch > /tmp/src-$size.txt 2>&1
  echo "$size exit $? ($((SECONDS-START)) s)"; tail -2 /tmp/src-$size.txt
  ncu --import /tmp/src-$size.ncu-rep --page source --csv --print-source sass > $FINAL/sass-$size.csv 2>&1
  head -c 300 $FINAL/sass-$size.csv; echo
done
cp $OUT/host.txt $FINAL/
