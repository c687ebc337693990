#!/usr/bin/env bash
# Issue 33's HGEMM record: the HGEMM GPU tests and the launch plans, h6's stream-K tile verified and
# paired with torch.mm and with the plain 128x256 entry in two processes (benchmarks/gpu/experiments/
# h6_stream_k.py; the first also shares every last wave, whatever its fill), then the whole HGEMM
# ladder benchmarked twice (nsprof bench, paired % cuBLAS). Run from the repository root with
# .devkit carried; one archive, results.tgz, comes back in $OUT.
source benchmarks/gpu/record_start.sh
timeout 200 python3 -m pytest -q -m gpu tests/test_gpu_stages.py tests/test_launch_plan.py -k "h6 or hgemm or plan" \
  -p no:cacheprovider > "$OUT/gpu-tests.txt" 2>&1
echo "gpu tests exit $? ($((SECONDS - START)) s)"; grep -E "passed|failed|^FAILED|Error" "$OUT/gpu-tests.txt" | tail -8
for run in 1 2; do
  EXTRA=(--every-tail); [ "$run" = 2 ] && EXTRA=(--check 3072)
  timeout 150 python3 benchmarks/gpu/experiments/h6_stream_k.py --out "$OUT/h6-sk-run$run.jsonl" --rounds 3 \
    --sizes 3072,4096,5120,6144,8192 "${EXTRA[@]}" > "$OUT/h6-sk-run$run.txt" 2>&1
  echo "stream-K run $run exit $? ($((SECONDS - START)) s)"
done
grep -h '"ok": false' "$OUT"/h6-sk-run*.jsonl
cat "$OUT"/h6-sk-run*.jsonl | python3 -c "
import json,sys,collections
r=collections.defaultdict(list)
for l in sys.stdin:
    d=json.loads(l)
    for k in ('ratio_torch','plain_ratio_torch','sk_over_plain','over_plain'):
        if k in d: r[(d['phase'],d['size'],d.get('tile',''),k)].append(d[k])
for k,v in sorted(r.items()): print(k, f'{min(v):.3f}-{max(v):.3f}')"
for run in 1 2; do
  timeout 150 python3 -m nsprof bench --op hgemm --size 512x2048x1024,1024,3072,4096,8192 \
    --save-as "$OUT/bench-hgemm-run$run.json" > "$OUT/bench-hgemm-run$run.txt" 2>&1
  echo "bench run $run exit $? ($((SECONDS - START)) s)"
done
tail -n 32 "$OUT/bench-hgemm-run1.txt"
tar czf "$FINAL/results.tgz" -C "$OUT" . ; echo "total $((SECONDS - START)) s"
