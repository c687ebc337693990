#!/bin/bash
# Second probe on the H200: ncu NVTX filter syntax, v8/v10 tuning sweeps, ncu CSV fixtures.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH_EXTRA=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source .devkit/setup.sh
export PYTHONPATH=$PWD:$PYTHONPATH
echo "== ncu: NVTX column without filter"
ncu --clock-control none --nvtx --metrics gpu__time_duration.sum --csv --page raw python3 benchmarks/ncu_nvtx_probe.py > "$OUT/probe_nofilter.csv" 2>&1
grep -v '^==' "$OUT/probe_nofilter.csv" | head -4 | cut -c1-600
good=""
for expr in 'nsprof@plain/' 'plaindefault/' 'nsprof@sgemm/v6/64x64x64/' 'nsprof@sgemm/v6/64x64x64' 'regex:nsprof@sgemm/v6/.*/' 'nsprof@regex:sgemm/v6/.*/' 'regex:nsprof@sgemm\/v6\/.*/' 'regex:nsprof@sgemm.v6..*/' 'nsprof@sgemm\/v6\/64x64x64/'; do
  n=$(ncu --clock-control none --nvtx --nvtx-include "$expr" --metrics gpu__time_duration.sum --csv --page raw python3 benchmarks/ncu_nvtx_probe.py 2>&1 | grep -o 'cupy_[a-z]*' | sort | uniq -c | tr '\n' ' ')
  echo "-- [$expr] -> $n"
done
echo "== tuning v8"
python3 benchmarks/tune_stage.py --stage v8 --sizes 1024,2048,4096 --plans auto,128x128/1,128x128/2,128x128/4,64x128/1,64x64/1 --knobs "V8_WARP_ROWS=2,4;V8_MIN_BLOCKS=1,2" > "$OUT/tune_v8.txt" 2>&1
grep -v '^{' "$OUT/tune_v8.txt"
echo "== tuning v10"
python3 benchmarks/tune_stage.py --stage v10 --sizes 2048,4096,8192 --knobs "V10_MIN_BLOCKS=1,2;V10_ROUND=0,1" > "$OUT/tune_v10.txt" 2>&1
grep -v '^{' "$OUT/tune_v10.txt"
ls -la "$OUT"
