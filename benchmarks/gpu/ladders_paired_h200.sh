#!/usr/bin/env bash
# The ladder records on the paired baseline (issue 33; on an H200 for issue 59): every GPU test of the
# suite, then `nsprof bench` twice, in fresh processes, for the ladders named in LADDERS (sgemm, sgemv,
# hgemm) at the sizes of the earlier records. Run from the repository root with .devkit carried; each
# run's record and output are copied to $OUT as it ends (so a timed-out call keeps the runs it
# finished), and results.tgz holds everything. TESTS=0 skips the tests.
source benchmarks/gpu/record_start.sh
if [ "${TESTS:-1}" = 1 ]; then
  timeout 400 python3 -m pytest -q -m gpu tests -p no:cacheprovider > "$OUT/gpu-tests.txt" 2>&1
  echo "gpu tests exit $? ($((SECONDS - START)) s)"; grep -E "passed|failed|^FAILED|^ERROR" "$OUT/gpu-tests.txt" | tail -8
fi
declare -A SIZES=([sgemm]=1024,4096,8192,1000x1200x800,1024x1280x768 [sgemv]=4096,8192,16384,32768,1048576x256,256x1048576
               [hgemm]=512x2048x1024,1024,3072,4096,8192)
for op in ${LADDERS:-sgemv}; do
  for run in 1 2; do
    timeout 200 python3 -m nsprof bench --op "$op" --size "${SIZES[$op]}" --save-as "$OUT/bench-$op-run$run.json" \
      > "$OUT/bench-$op-run$run.txt" 2>&1
    echo "bench $op run $run exit $? ($((SECONDS - START)) s)"
    cp "$OUT/bench-$op-run$run".* "$OUT/host.txt" "$FINAL/"
  done
done
tar czf "$FINAL/results.tgz" -C "$OUT" . ; echo "total $((SECONDS - START)) s"
