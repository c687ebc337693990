#!/usr/bin/env bash
# The found-loop programs loops_h200.sh left out, and what nsprof profile's nsys options cost:
# - an LLM's decode (tests/programs/loop_llm_generate.py): eager, and with a static cache compiled to CUDA
#   graphs; each run plainly, each captured with nsys's defaults and no markers, the eager one also with
#   markers (an NVTX range `step` per forward pass: the truth);
# - the data loader and the CuPy loop with markers (the truth beside loops_h200.sh's unmarked captures);
# - the transformer under torch.profiler (its trace's verdict beside the nsys capture's);
# - the JAX loop with the options nsprof profile uses (`nsprof profile --tool nsys`: -t cuda,nvtx and
#   graphs traced by node), unmarked and marked, and with OS runtime calls added (does osrt lose its kernels?);
# - nsys's options' cost on the launch-bound transformer: its own median ms a step plainly, under nsprof
#   profile's options, with OS runtime calls added, and with CPU sampling off, twice each, alternated.
# Run from the repository root on the GPU machine with .devkit carried; results in /tmp/record ($OUT),
# packed into the device tool's $OUT. PART=a (LLM eager, markers, torch.profiler), PART=b (the LLM's
# static cache and its marked run, JAX, cost), PART=jax (JAX alone: b's run copied its exports from the
# wrong folder) or PART=pair (the LLM's two variants plainly, alternated on one machine): each must end
# within 9 minutes, so no capture runs past DEADLINE seconds.
source benchmarks/gpu/record_start.sh
P=tests/programs
C=/tmp/loop-captures; rm -rf $C; mkdir -p $C
DEADLINE=${DEADLINE:-400}
PART=${PART:-a}
python3 -c "import jax, triton, transformers; print('jax', jax.__version__, 'triton', triton.__version__,
'transformers', transformers.__version__)" >> "$OUT/host.txt" 2>&1
left() { echo $((DEADLINE - (SECONDS - START))); }
plain() {  # the program's own JSON line (its last line of stdout) into plain.jsonl
  echo "== $*" >> "$OUT/plain.err"
  timeout -k 5 $(( $(left) < 150 ? $(left) : 150 )) python3 "$@" 2>> "$OUT/plain.err" | tail -1 >> "$OUT/plain.jsonl"
  echo "plain $*: $((SECONDS - START)) s"
}
NAMES=()
cap() {  # $1: name, $2...: nsys options up to --, then the program and its arguments
  local name=$1; shift
  local options=(); while [ "$1" != "--" ]; do options+=("$1"); shift; done; shift
  local limit=$(left); [ $limit -gt 180 ] && limit=180
  if [ $limit -lt 30 ]; then echo "$name: skipped, $((SECONDS - START)) s gone" | tee $C/$name.nsys.log; return; fi
  NAMES+=("$name")
  timeout -k 10 $limit nsys profile "${options[@]}" --export=sqlite -o $C/$name --force-overwrite=true python3 "$@" \
    > $C/$name.nsys.log 2>&1 || echo "$name: exit $? (timeout $limit s)" >> $C/$name.nsys.log
  grep '^{"program"' $C/$name.nsys.log | sed "s/^{/{\"capture\": \"$name\", /" >> "$OUT/captured.jsonl"
  tail -2 $C/$name.nsys.log
  echo "$name: $((SECONDS - START)) s"
}
if [ "$PART" = a ]; then
  plain $P/loop_llm_generate.py --variant eager
  plain $P/loop_llm_generate.py --variant static
  cap llm-generate -- $P/loop_llm_generate.py --variant eager
  cap llm-generate-static -- $P/loop_llm_generate.py --variant static
  cap llm-generate-marked -- $P/loop_llm_generate.py --variant eager --markers
  cap dataloader-marked -- $P/loop_dataloader.py --workers 0 --steps 30 --markers
  cap cupy-heat-marked -- $P/loop_cupy_heat.py --variant eager --steps 300 --markers
  mkdir -p $C/transformer-train-kineto
  plain $P/loop_transformer_train.py --variant eager --steps 30 --torch-profiler $C/transformer-train-kineto
  ORDER=(llm-generate llm-generate-static llm-generate-marked cupy-heat-marked dataloader-marked)
fi
if [ "$PART" = b ]; then
  # the static-cache decode and the marked eager one (a first try of both failed: see loop_llm_generate.py)
  plain $P/loop_llm_generate.py --variant static
  cap llm-generate-static -- $P/loop_llm_generate.py --variant static
  cap llm-generate-marked -- $P/loop_llm_generate.py --variant eager --markers
fi
if [ "$PART" = pair ]; then
  # the LLM's eager and static-cache decode plainly, side by side on one machine, alternated
  for variant in eager static eager static; do plain $P/loop_llm_generate.py --variant $variant; done
  ORDER=()
fi
if [ "$PART" = b ] || [ "$PART" = jax ]; then
  # JAX: nsprof profile's nsys (the product's own command; its profile directory holds nsys.sqlite)
  for markers in no-markers markers; do
    [ $(left) -lt 60 ] && break
    flag=--no-markers; [ $markers = markers ] && flag=
    timeout -k 10 150 python3 -m nsprof profile --tool nsys --out $C/jax-$markers -- python3 $P/jax_mlp_train.py \
      --steps 30 $flag > $C/jax-$markers.profile.log 2>&1; echo "exit $?" >> $C/jax-$markers.profile.log
    cp $C/jax-$markers/*/nsys.sqlite $C/jax-mlp-$markers.sqlite
    tail -3 $C/jax-$markers.profile.log; echo "jax $markers: $((SECONDS - START)) s"
  done
  NAMES+=(jax-mlp-no-markers jax-mlp-markers)
  ORDER=(jax-mlp-no-markers jax-mlp-markers)
fi
if [ "$PART" = b ]; then
  # the same options plus OS runtime calls
  cap jax-mlp-osrt -t cuda,nvtx,osrt --cuda-graph-trace=node -- $P/jax_mlp_train.py --steps 30 --no-markers
  rows() {  # $1: export, $2: table: its row count, or "none" where the export has no such table
    python3 -c "import sqlite3, sys
try: print(sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True).execute(f'select count(*) from {sys.argv[2]}').fetchone()[0])
except sqlite3.Error: print('none')" "$1" "$2"
  }
  # the cost of each option set on the launch-bound transformer, alternated, twice
  cost() {  # $1: label, rest: nsys options ("plain": none)
    local label=$1; shift
    [ $(left) -lt 40 ] && { echo "$label: skipped"; return; }
    if [ "$label" = plain ]; then
      line=$(timeout 60 python3 $P/loop_transformer_train.py --steps 60 2>/dev/null | tail -1)
    else
      line=$(timeout 90 nsys profile "$@" --export=sqlite -o /tmp/cost-$label --force-overwrite=true \
        python3 $P/loop_transformer_train.py --steps 60 2>/dev/null | grep '^{"program"')
      samples=$(rows /tmp/cost-$label.sqlite COMPOSITE_EVENTS); osrt=$(rows /tmp/cost-$label.sqlite OSRT_API)
      line="${line%\}}, \"samples\": \"$samples\", \"osrt_calls\": \"$osrt\"}"
    fi
    echo "{\"label\": \"$label\", \"options\": \"$*\", \"run\": $line}" | tee -a "$OUT/cost.jsonl"
  }
  for round in 1 2; do
    cost plain
    cost nsprof -t cuda,nvtx --cuda-graph-trace=node
    cost osrt -t cuda,nvtx,osrt --cuda-graph-trace=node
    cost nosamples -t cuda,nvtx --cuda-graph-trace=node -s none --cpuctxsw=none
  done
  ORDER=(llm-generate-static llm-generate-marked jax-mlp-no-markers jax-mlp-markers jax-mlp-osrt)
fi
for name in "${NAMES[@]}"; do
  [ -f $C/$name.sqlite ] && timeout 40 nsys stats -q -r cuda_gpu_kern_sum --format csv -o $C/$name-stats \
    $C/$name.sqlite > $C/$name-stats.log 2>&1 &
done
wait
ls -la $C | tee "$OUT/captures-ls.txt"
cat "$OUT/captured.jsonl" "$OUT/plain.jsonl" 2>/dev/null
( cd /tmp && for name in "${ORDER[@]}"; do ls loop-captures/$name.sqlite 2>/dev/null; done
  ls loop-captures/transformer-train-kineto/trace.json 2>/dev/null ) > /tmp/pack-list.txt
tar cf - -C /tmp -T /tmp/pack-list.txt | xz -T16 -9 > /tmp/loop-captures.tar.xz
ls -la /tmp/loop-captures.tar.xz
split -b 15M -d /tmp/loop-captures.tar.xz "$FINAL/loop-captures-$PART.tar.xz."
rm -f "$FINAL"/loop-captures-$PART.tar.xz.0[4-9]
tar czf "$FINAL/texts-$PART.tgz" --exclude="*.sqlite" --exclude="*.nsys-rep" --exclude="*.qdstrm" \
  --exclude="trace.json" --exclude="*.ncu-rep" -C /tmp record loop-captures
echo "took $((SECONDS - START)) s"
