source benchmarks/gpu/record_start.sh
SQUARES=1024,2048,3072,4096,6144,8192,3000x5000x2000
MODELS=""
for m in 1 16 128 2048 8192; do for nk in 4096x4096 14336x4096 4096x14336 128256x4096; do MODELS+="${MODELS:+,}${m}x${nk}"; done; done
timeout 540 python3 benchmarks/gpu/experiments/cold_inputs.py --sizes "$SQUARES,$MODELS" --out "$FINAL/cold-inputs.jsonl" > "$FINAL/cold-inputs.txt" 2>&1
echo "cold exit $? ($((SECONDS - START)) s)"; cp "$OUT/host.txt" "$FINAL/"
