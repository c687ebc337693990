#!/usr/bin/env bash
# Issue 43's corpus: eight programs nsprof was not tuned on (and its own ladder), each captured
# unchanged several times, for noise floors by kind of work and their leave-one-out check
# (benchmarks/noise_corpus.py). One call per lease of the GPU machine:
#   LEASE=1 bash benchmarks/gpu/noise_corpus_h200.sh   (then give the machine back)
#   LEASE=2 bash benchmarks/gpu/noise_corpus_h200.sh   (a fresh machine: another lease, maybe another host)
# Within a call, round 1 captures each program 3 times back to back; later rounds capture each
# program once, so their runs are minutes apart; rounds stop before BUDGET seconds. Captures use
# nsprof profile's own nsys options (-t cuda,nvtx --export=sqlite). Run from the repository root
# with .devkit carried; exports (without .nsys-rep, unused tables dropped) and a log per run in $OUT.
source benchmarks/gpu/record_start.sh
LEASE=${LEASE:-1}; BUDGET=${BUDGET:-480}
P=tests/programs; W=/tmp/corpus-$LEASE; rm -rf $W; mkdir -p $W
{ echo "lease $LEASE on $(hostname)"; nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id --format=csv,noheader
  python3 -c "import jax, triton, transformers; print('jax', jax.__version__, 'triton', triton.__version__, 'transformers', transformers.__version__)"
} >> "$OUT/host.txt" 2>&1
nvcc -O2 -arch=sm_90 -o /tmp/cuda_samples $P/cuda_samples.cu || echo "cuda_samples: build failed" >> "$OUT/host.txt"
declare -A CMD=(
  [train]="python3 $P/torch_train_step.py --steps 30"
  [compile]="python3 $P/torch_compile_block.py --steps 20"
  [triton]="python3 $P/triton_matmul_bench.py --sizes 1024,2048"
  [jax]="python3 $P/jax_mlp_train.py --steps 30"
  [cuda-samples]="/tmp/cuda_samples --iterations 20"
  [cupy-streams]="python3 $P/cupy_streams.py --iterations 20"
  [llm-decode]="python3 $P/host_llama_generate.py --tokens 32 --calls 3"
  [ladder]="ladder"
)
ORDER="train compile triton jax cuda-samples cupy-streams llm-decode ladder"
echo "program,lease,run,round,started_utc,seconds,exit" > "$OUT/runs.csv"
declare -A LAST NEXT
capture() {  # $1: program, $2: round
  local name=$1 run=${NEXT[$1]:-1} began=$SECONDS code out=$W/$1/$1-$LEASE-${NEXT[$1]:-1}
  mkdir -p $W/$name; NEXT[$name]=$((run + 1))
  if [ "$name" = ladder ]; then
    timeout 240 python3 -m nsprof profile --stage v5,v6 --size 1024 --tool nsys --out $out > $out.log 2>&1
  else
    timeout 240 nsys profile -t cuda,nvtx --export=sqlite -o $out --force-overwrite=true ${CMD[$name]} > $out.log 2>&1
  fi
  code=$?; LAST[$name]=$((SECONDS - began))
  echo "$name,$LEASE,$run,$2,$(date -u +%FT%TZ),${LAST[$name]},$code" | tee -a "$OUT/runs.csv"
}
fits() { [ $((SECONDS - START + ${LAST[$1]:-30})) -lt $BUDGET ]; }
# WARM=1: a run of each compiling program first, not captured, as a user's second run finds its caches
[ "${WARM:-0}" = 1 ] && for name in compile triton; do timeout 200 ${CMD[$name]} > $W/warm-$name.log 2>&1; done
for name in $ORDER; do for i in $(seq ${BACK_TO_BACK:-3}); do fits $name && capture $name 1; done; done
round=2
while :; do
  any=0
  for name in $ORDER; do fits $name && { capture $name $round; any=1; }; done
  [ $any = 1 ] || break; round=$((round + 1))
done
echo "captures took $((SECONDS - START)) s"
# keep what nsprof reads: the exports (unused tables dropped), the ladder's manifests and bench records, the logs
find $W -name "*.nsys-rep" -delete
find $W -name "*.sqlite" | xargs -P 16 -I{} sh -c 'python3 benchmarks/trim_export.py "{}" "{}.t" --whole > /dev/null && mv "{}.t" "{}"'
tar cf - -C /tmp corpus-$LEASE | xz -T16 -6 > /tmp/corpus.tar.xz
ls -la /tmp/corpus.tar.xz
split -b 15M -d /tmp/corpus.tar.xz "$FINAL/corpus-$LEASE.tar.xz."
cp "$OUT/runs.csv" "$FINAL/runs-$LEASE.csv"; cp "$OUT/host.txt" "$FINAL/host-$LEASE.txt"
echo "done in $((SECONDS - START)) s"; ls -la "$FINAL"
