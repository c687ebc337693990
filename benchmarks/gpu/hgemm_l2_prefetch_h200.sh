#!/usr/bin/env bash
# Issue 60: the hgemm_h6_l2pf_* candidates (a block asks the L2 for its first k tiles by address as it starts, so
# their DRAM reads on cold inputs need not wait for the tensor maps) against the declared entries, in one device
# call: each verified, then paired with the faster library (h6_plans.py through hgemm_probes_h200.sh), both
# prefetch modes; then the tile clocks of a block's start at 1024^3 and a decode shape with and without.
# Run from the repository root with .devkit carried. Files: probes.jsonl, probes.txt, timeline.jsonl, host.txt.
X=benchmarks/gpu/experiments
pf() { echo "hgemm_h6_$1,hgemm_h6_l2pf_$1+H6_L2PF_MODE=1,hgemm_h6_l2pf_$1+H6_L2PF_MODE=2,hgemm_h6_$1"; }
TESTS=0 AGAINST=library PROBES="1024,512x2048x1024,1000x1200x808|$(pf 128x64)||
1x4096x4096,16x4096x4096,1x4096x14336|$(pf 16x256/auto)||
2048,2048x4096x4096|$(pf pp_tma_128x128)||" bash benchmarks/gpu/hgemm_probes_h200.sh
source .devkit/setup.sh
PYTHONPATH=$PWD timeout 150 python3 $X/h6_timeline.py --cold --sizes 1024,16x4096x4096 \
  --plans "hgemm_h6_128x64,hgemm_h6_l2pf_128x64,hgemm_h6_16x256/auto,hgemm_h6_l2pf_16x256/auto" --out "$OUT/timeline.jsonl"
echo "timeline exit $?"
