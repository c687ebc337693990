#!/usr/bin/env bash
# nsprof bench's own % cuBLAS, paired (the default since issue 33's second part), in two fresh
# processes each (--runs 2: run_pct_cublas keeps each run's): HGEMM h6 and SGEMM v8 and v11 against
# the fastest library at 4096^3 and 8192^3. Run from the repository root with .devkit carried;
# results in $OUT.
set -uo pipefail
source .devkit/setup.sh
export PYTHONUNBUFFERED=1 COLUMNS=160 PYTHONPATH=$PWD:${PYTHONPATH:-} NSPROF_DATA_DIR=/tmp/nsprof-data
START=$SECONDS
{ date -u; nvidia-smi -L; } > "$OUT/host.txt" 2>&1; cat "$OUT/host.txt"
timeout 280 python3 -m nsprof bench --op hgemm --stage h6 --size 4096,8192 --runs 2 --save-as "$OUT/bench-hgemm.json" \
  > "$OUT/bench-hgemm.txt" 2>&1; echo "hgemm exit $? ($((SECONDS - START)) s)"
timeout 280 python3 -m nsprof bench --stage v8,v11 --size 4096,8192 --runs 2 --save-as "$OUT/bench-sgemm.json" \
  > "$OUT/bench-sgemm.txt" 2>&1; echo "sgemm exit $? ($((SECONDS - START)) s)"
cat "$OUT/bench-hgemm.txt" "$OUT/bench-sgemm.txt"
python3 -c "
import json,sys
for f in sys.argv[1:]:
    for r in json.load(open(f))['results']:
        print(r['stage'], r['size'], r['status'], r.get('pct_cublas_method'), r.get('pct_cublas_of'), r.get('run_pct_cublas'), r.get('run_medians_ms'))
" "$OUT/bench-hgemm.json" "$OUT/bench-sgemm.json"
echo "total $((SECONDS - START)) s"
