#!/usr/bin/env bash
# Issue 60: the clustered 128x256 entry (hgemm_h6_cl2_tma_256x256, B multicast to two vertically adjacent
# tiles) against the declared one under ncu, the clocks left alone, at 4096^3 and 2048 x 14336 x 4096: time,
# cycles, SM clock, L2 and DRAM bytes, issue activity of the first five launches of h6 and torch.mm's kernel
# (each plan's verification, then its pairing with torch.mm; benchmarks/gpu/experiments/h6_plans.py). Run from the
# repository root with .devkit carried; every capture's raw page lands in one $OUT/ncu-cl2.csv.
source benchmarks/gpu/record_start.sh
# METRICS replaces the list below (e.g. the L2's traffic by source: lts__t_sectors_srcunit_tex.sum, ..._ltcfabric.sum)
M=${METRICS:-gpu__time_duration.sum,gpc__cycles_elapsed.max,sm__cycles_elapsed.avg.per_second,lts__t_bytes.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum}
# SIZES and PLANS replace the sizes and plans below (h6_plans.py's); CLOCK (ncu's --clock-control: none, base) and
# CACHE (--cache-control: all flushes the caches before each kernel, none keeps them warm as the bench does);
# AGAINST=library pairs with the library's kept cuBLASLt candidate too; COUNT: the kernels captured per plan;
# KERNELS: the regular expression of the kernels' names captured (the library's tuning launches come first)
for size in ${SIZES:-4096 2048x14336x4096}; do for plan in ${PLANS:-hgemm_h6_cl2_tma_256x256 auto}; do
  timeout 150 ncu -f --clock-control ${CLOCK:-none} --cache-control ${CACHE:-all} -k "regex:${KERNELS:-hgemm_h6|nvjet}" -c ${COUNT:-5} --metrics $M \
    -o /tmp/n-$plan-$size python3 benchmarks/gpu/experiments/h6_plans.py --sizes $size --plans $plan --against ${AGAINST:-torch} > /tmp/log-$plan-$size.txt 2>&1
  echo "$plan $size exit $? ($((SECONDS-START)) s)"
  ncu --import /tmp/n-$plan-$size.ncu-rep --csv --page raw --print-units base > $OUT/ncu-$plan-$size.csv 2>&1
  tail -3 /tmp/log-$plan-$size.txt
done; done
cat $OUT/ncu-*.csv > $FINAL/ncu-cl2.csv; cp $OUT/host.txt $FINAL/
