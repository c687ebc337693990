#!/usr/bin/env bash
# jax.profiler's own traces, for nsprof's reader of them: the JAX MLP fed by host batches
# (tests/programs/jax_host_batches.py) traced as JAX users trace it (start_trace with a Perfetto trace,
# the loop and its compilation inside); three unchanged runs a side (A and B) for diff; three with a planted
# change (--wider-input: the first layer's products twice the work); the fix (--variant overlap); the same
# program marked by StepTraceAnnotation; a small ResNet twice (cuDNN convolutions, XLA's autotuner); and the
# MLP under `nsprof profile --tool nsys`, to pair with its trace. Plain runs of both variants first, alternated.
# Run from the repository root on the GPU machine with .devkit carried; results in /tmp/record ($OUT),
# packed into the device tool's $OUT. About 5 minutes; nothing starts past DEADLINE seconds.
source benchmarks/gpu/record_start.sh
P=tests/programs
T=/tmp/jax-traces; rm -rf $T; mkdir -p $T
DEADLINE=${DEADLINE:-420}
python3 -c "import jax, jaxlib; print('jax', jax.__version__, 'jaxlib', jaxlib.__version__)" >> "$OUT/host.txt" 2>&1
python3 -m pip list 2>/dev/null | grep -i -E "xprof|tensorboard|protobuf|tensorflow|perfetto" >> "$OUT/host.txt"
left() { echo $((DEADLINE - (SECONDS - START))); }
run() {  # $1: name ("-" for a plain run), rest: program and arguments; the JSON line into runs.jsonl
  local name=$1; shift
  [ $(left) -lt 40 ] && { echo "$name: skipped, $((SECONDS - START)) s gone"; return; }
  local trace=(); [ "$name" != - ] && trace=(--trace $T/$name)
  timeout -k 5 120 python3 "$@" "${trace[@]}" 2> $T/${name/-/plain}-$RANDOM.err | tail -1 \
    | sed "s/^{/{\"trace\": \"$name\", /" | tee -a "$OUT/runs.jsonl"
  echo "$name: $((SECONDS - START)) s"
}
for variant in sync overlap sync overlap; do run - $P/jax_host_batches.py --variant $variant; done
for i in 1 2 3; do run mlp-a$i $P/jax_host_batches.py; run mlp-b$i $P/jax_host_batches.py; done
for i in 1 2 3; do run mlp-wider$i $P/jax_host_batches.py --wider-input; done
run mlp-overlap $P/jax_host_batches.py --variant overlap
run mlp-marked $P/jax_host_batches.py --markers
SMALL="--steps 20 --batch 32 --image 64 --width 16 --classes 10"
for i in 1 2; do
  [ $(left) -lt 60 ] && break
  timeout -k 5 150 python3 $P/jax_resnet_train.py $SMALL --trace $T/resnet$i > $T/resnet$i.log 2>&1
  tail -1 $T/resnet$i.log; echo "resnet$i: $((SECONDS - START)) s"
done
if [ $(left) -gt 60 ]; then
  timeout -k 10 150 python3 -m nsprof profile --tool nsys --out $T/nsys-mlp -- python3 $P/jax_host_batches.py \
    > $T/nsys-mlp.log 2>&1; echo "exit $?" >> $T/nsys-mlp.log
  cp $T/nsys-mlp/*/nsys.sqlite $T/mlp-nsys.sqlite; tail -3 $T/nsys-mlp.log
fi
find $T -type f | sort | xargs ls -la | tee "$OUT/traces-ls.txt" | tail -40
( cd /tmp && find jax-traces -name "*.json.gz" -o -name "*.xplane.pb" -o -name "*.log" -o -name "mlp-nsys.sqlite" ) \
  > /tmp/pack-list.txt
tar cf - -C /tmp -T /tmp/pack-list.txt | xz -T16 -6 > /tmp/jax-traces.tar.xz
ls -la /tmp/jax-traces.tar.xz
split -b 15M -d /tmp/jax-traces.tar.xz "$FINAL/jax-traces.tar.xz."
rm -f "$FINAL"/jax-traces.tar.xz.0[4-9]
tar czf "$FINAL/texts.tgz" -C /tmp record
echo "took $((SECONDS - START)) s"
