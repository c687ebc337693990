#!/usr/bin/env bash
# Issue 33 on the H200: the library stages tuned over CuPy's call and cuBLASLt's algorithms, with
# PyTorch's product timed beside them.
#   PART=check (default): the GPU tests of every stage (library stages at square, ragged and extreme
#     shapes) and of the pipeline, `nsprof pipeline` under nsys (its flows run by nsprof.workload),
#     and the library stages benched at 4096^3, 8192^3 (SGEMV 16384^2);
#   PART=sgemm: the SGEMM record, twice (every stage at 1024^3, 4096^3, 8192^3, 1000x1200x800, 1024x1280x768);
#   PART=hgemm-sgemv: the HGEMM and SGEMV records, twice each.
# Run from the repository root on the GPU machine with .devkit carried; results in $OUT.
set -uo pipefail
source .devkit/setup.sh
export PYTHONUNBUFFERED=1 COLUMNS=120 PYTHONPATH=$PWD:${PYTHONPATH:-} NSPROF_DATA_DIR=/tmp/nsprof-data
R=/tmp/run; rm -rf "$R"; mkdir -p "$R"; START=$SECONDS
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.sm,clocks.max.sm --format=csv,noheader; nsys --version
  python3 -c "import cupy, torch; print('cupy', cupy.__version__, 'torch', torch.__version__, 'cuda', torch.version.cuda)"; } > "$R/versions.txt" 2>&1
cat "$R/versions.txt"
PART=${PART:-check}
if [ "$PART" = check ]; then
  timeout 330 python3 -m pytest -q -m gpu tests/test_gpu_stages.py tests/test_pipeline.py -p no:cacheprovider > "$R/gpu-tests.txt" 2>&1
  echo "gpu tests exit $? ($((SECONDS - START)) s)" >> "$R/gpu-tests.txt"; grep -E "passed|failed|FAILED|Error" "$R/gpu-tests.txt" | tail -15
  timeout 120 python3 -m nsprof pipeline --size 1024 --out /tmp/caps > "$R/pipeline.txt" 2>&1; echo "pipeline exit $? ($((SECONDS - START)) s)" >> "$R/pipeline.txt"
  tail -25 "$R/pipeline.txt"
  timeout 60 python3 -m nsprof bench --op sgemm --stage v9,v9t --size 4096,8192 --save-as "$R/bench-sgemm-lib.json" > "$R/bench-lib.txt" 2>&1
  timeout 40 python3 -m nsprof bench --op hgemm --stage h7 --size 4096,8192 --save-as "$R/bench-hgemm-lib.json" >> "$R/bench-lib.txt" 2>&1
  timeout 40 python3 -m nsprof bench --op sgemv --stage s7 --size 16384x16384 --save-as "$R/bench-sgemv-lib.json" >> "$R/bench-lib.txt" 2>&1
  cat "$R/bench-lib.txt"
fi
if [ "$PART" = sgemm ]; then
  timeout 60 python3 -m pytest -q -m gpu tests/test_pipeline.py -k "warm_variant and v9" -p no:cacheprovider 2>&1 | tail -2
  for run in 1 2; do
    timeout 270 python3 -m nsprof bench --op sgemm --size 1024,4096,8192,1000x1200x800,1024x1280x768 \
      --save-as "$R/bench-sgemm-run$run.json" > "$R/bench-sgemm-run$run.txt" 2>&1; echo "run $run exit $? ($((SECONDS - START)) s)"
  done
  tail -45 "$R/bench-sgemm-run1.txt"
fi
if [ "$PART" = hgemm-sgemv ]; then
  for run in 1 2; do
    timeout 150 python3 -m nsprof bench --op hgemm --size 512x2048x1024,1024,4096,8192 \
      --save-as "$R/bench-hgemm-run$run.json" > "$R/bench-hgemm-run$run.txt" 2>&1; echo "hgemm $run exit $? ($((SECONDS - START)) s)"
    timeout 120 python3 -m nsprof bench --op sgemv --size 4096,8192,16384,32768,1048576x256,256x1048576 \
      --save-as "$R/bench-sgemv-run$run.json" > "$R/bench-sgemv-run$run.txt" 2>&1; echo "sgemv $run exit $? ($((SECONDS - START)) s)"
  done
  tail -30 "$R/bench-hgemm-run1.txt"; tail -30 "$R/bench-sgemv-run1.txt"
fi
tar czf "$OUT/run.tgz" -C /tmp run
echo "total $((SECONDS - START)) s"
