# Issue 60, eighteenth part, call 9: the GPU tests with the one-round rule declared, and nsprof bench where it decides.
source benchmarks/gpu/record_start.sh
timeout 200 python3 -m pytest -q -m gpu tests/test_gpu_stages.py tests/test_gpu_card.py -k 'hgemm or h6 or card' \
  -p no:cacheprovider > "$FINAL/gpu-tests-call9.txt" 2>&1
echo "gpu tests exit $? ($((SECONDS - START)) s)"; tail -1 "$FINAL/gpu-tests-call9.txt"
timeout 200 python3 -m nsprof bench --op hgemm --stage h6 --size 1000x1200x808,1280,896x1792x1024,1400,1024 \
  --save-as "$FINAL/one-round-bench.json" > "$FINAL/one-round-bench.txt" 2>&1
echo "bench exit $? ($((SECONDS - START)) s)"
cp "$OUT/host.txt" "$FINAL/"
