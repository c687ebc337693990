#!/usr/bin/env bash
# Issue 60: does h6's TMA multicast cut the L2's reads as the library's clusters do? Under ncu (boost clocks, caches
# flushed before each kernel: cold, as the bench), h6's plans at a size against the library's clustered kernel there:
# L2 read sectors and requests from the SMs, sectors over the L2 fabric, bytes delivered to the SMs, cycles.
# CASES: "SIZE|PLANS|LIBRARY_KERNEL_REGEX" a line. Run from the repository root with .devkit carried; one CSV back.
source benchmarks/gpu/record_start.sh
M=${METRICS:-gpu__time_duration.sum,gpc__cycles_elapsed.max,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_ltcfabric.sum,l1tex__m_xbar2l1tex_read_bytes.sum,dram__bytes_read.sum,smsp__inst_executed.sum}
# The library's kernel at 2048^3 and 4096^3 is its fastest there once its candidates are timed in turn (benchmarks/
# records/2026-12-02-h200-hgemm-library-finalists): 128 x 128 in 2 x 1 clusters. cuBLAS computes the transposed
# product, so its pairs likely sit side by side along our N (h6's cl2a, sharing A), not stacked (h6's cl2, sharing B).
CASES=${CASES:-"2048|auto,hgemm_h6_pp_cl2_tma_256x128,hgemm_h6_pp_cl2a_tma_128x256|nvjet_sm90_hsh_128x128_64x6_2x1
4096|auto,hgemm_h6_pp_cl2_tma_256x128,hgemm_h6_pp_cl2a_tma_128x256|nvjet_sm90_hsh_128x128_64x6_2x1
1024|auto,hgemm_h6_cl2a_128x128|nvjet_sm90_hsh_128x64_64x8_1x2"}
i=0
while IFS='|' read -r size plans library; do
  [ -z "$size" ] && continue
  for plan in ${plans//,/ }; do
    i=$((i + 1))
    timeout 120 ncu -f --cache-control all -k "regex:hgemm_h6" -c 3 --metrics $M -o /tmp/m$i \
      python3 benchmarks/gpu/experiments/h6_plans.py --sizes $size --plans $plan > /tmp/m$i.log 2>&1
    echo "$size $plan exit $? ($((SECONDS - START)) s)"
    ncu --import /tmp/m$i.ncu-rep --csv --page raw --print-units base >> "$OUT/ncu-multicast.csv" 2>&1
  done
  i=$((i + 1))
  timeout 120 ncu -f --cache-control all -k "regex:$library" -c 3 --metrics $M -o /tmp/m$i \
    python3 benchmarks/gpu/experiments/h6_plans.py --sizes $size --plans auto --against library > /tmp/m$i.log 2>&1
  echo "$size $library exit $? ($((SECONDS - START)) s)"
  ncu --import /tmp/m$i.ncu-rep --csv --page raw --print-units base >> "$OUT/ncu-multicast.csv" 2>&1
done <<< "$CASES"
cp "$OUT/ncu-multicast.csv" "$OUT/host.txt" "$FINAL/"
echo "total $((SECONDS - START)) s"
