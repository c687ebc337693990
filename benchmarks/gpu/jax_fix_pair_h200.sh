#!/usr/bin/env bash
# The JAX MLP fed by host batches (tests/programs/jax_host_batches.py) and its fix, for issue 56's evidence:
# plain runs of the program (--variant sync) and of its fixed variant (--variant workers: batches made by
# worker threads ahead of the step), alternated; the fix traced by jax.profiler (its Perfetto trace kept too);
# the program under `nsprof profile --tool nsys`, alone and with its own jax.profiler trace inside (to pair the
# two kernel by kernel); a small ResNet and ResNet-50 traced twice each (cuDNN convolutions, XLA's autotuner:
# do two unchanged runs compile alike?). Every trace is trimmed here (benchmarks/trim_jax_trace.py) before it
# comes back. Run from the repository root on the GPU machine with .devkit carried; about 8 minutes; nothing
# starts past DEADLINE seconds.
source benchmarks/gpu/record_start.sh
P=tests/programs
T=/tmp/jax-traces; rm -rf $T; mkdir -p $T/trimmed
DEADLINE=${DEADLINE:-500}
python3 -c "import jax, jaxlib; print('jax', jax.__version__, 'jaxlib', jaxlib.__version__)" >> "$OUT/host.txt" 2>&1
left() { echo $((DEADLINE - (SECONDS - START))); }
run() {  # $1: name ("-" for a plain run), rest: program and arguments; the JSON line into runs.jsonl
  local name=$1; shift
  [ $(left) -lt 40 ] && { echo "$name: skipped, $((SECONDS - START)) s gone"; return; }
  local trace=(); [ "$name" != - ] && trace=(--trace $T/$name)
  timeout -k 5 150 python3 "$@" "${trace[@]}" 2> $T/${name/-/plain}-$RANDOM.err | tail -1 \
    | sed "s/^{/{\"trace\": \"$name\", /" | tee -a "$OUT/runs.jsonl"
  echo "$name: $((SECONDS - START)) s"
}
for variant in sync workers sync workers; do run - $P/jax_host_batches.py --variant $variant; done
run mlp-workers $P/jax_host_batches.py --variant workers
nsys_run() {  # $1: name, rest: program arguments; the export as $T/$1.sqlite
  local name=$1; shift
  [ $(left) -lt 70 ] && { echo "$name: skipped"; return; }
  timeout -k 10 170 python3 -m nsprof profile --tool nsys --out $T/$name -- python3 $P/jax_host_batches.py "$@" \
    > $T/$name.log 2>&1; echo "exit $?" >> $T/$name.log
  cp "$(find $T/$name -name nsys.sqlite | head -1)" $T/$name.sqlite; tail -4 $T/$name.log
  grep '^{' $T/$name.log | tail -1 | sed "s/^{/{\"trace\": \"$name\", /" >> "$OUT/runs.jsonl"
  echo "$name: $((SECONDS - START)) s"
}
nsys_run mlp-nsys
nsys_run mlp-nsys-traced --trace $T/mlp-nsys-traced-jax
SMALL="--steps 20 --batch 32 --image 64 --width 16 --classes 10"
for i in 1 2; do run resnet-small$i $P/jax_resnet_train.py $SMALL; done
for i in 1 2; do run resnet50-$i $P/jax_resnet_train.py --steps 8; done
for trace in $(find $T -name "*.trace.json.gz" -o -name "perfetto_trace.json.gz" | sort); do
  name=$(echo ${trace#$T/} | cut -d/ -f1)
  if [ "$(basename $trace)" = perfetto_trace.json.gz ]; then
    [ $name = mlp-workers ] || continue; name=$name-perfetto  # one Perfetto trace, to read
  fi
  python3 benchmarks/trim_jax_trace.py $trace $T/trimmed/$name.trace.json.gz >> "$OUT/trimmed.txt" 2>&1 \
    || echo "$trace: not trimmed" >> "$OUT/trimmed.txt"
done
cat "$OUT/trimmed.txt"
find $T -type f | sort | xargs ls -la > "$OUT/traces-ls.txt"
( cd /tmp && find jax-traces/trimmed -name "*.json.gz"; find jax-traces -maxdepth 1 -name "*.sqlite" -o -maxdepth 1 -name "*.log" ) \
  > /tmp/pack-list.txt
tar cf - -C /tmp -T /tmp/pack-list.txt | xz -T16 -6 > /tmp/jax-traces.tar.xz
ls -la /tmp/jax-traces.tar.xz
split -b 15M -d /tmp/jax-traces.tar.xz "$FINAL/jax-traces.tar.xz."
rm -f "$FINAL"/jax-traces.tar.xz.0[5-9]
tar czf "$FINAL/texts.tgz" -C /tmp record
echo "took $((SECONDS - START)) s"
