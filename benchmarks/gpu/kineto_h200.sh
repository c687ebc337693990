#!/usr/bin/env bash
# Kineto traces beside Nsight captures of the same programs, for the Kineto reader's tests:
# each program is traced once by torch.profiler (tests/programs/kineto_trace.py) and captured once
# by `nsprof profile -- CMD` (nsys, then ncu on its hot kernels); `nsys stats` on the capture is
# the oracle independent of nsprof. Also: the decode as TensorBoard's *.pt.trace.json.gz, a long
# decode (about 100 MB of JSON) for the reader's scale record, and JAX's profiler trace.
#   bash benchmarks/gpu/kineto_h200.sh   (from the repository root, .devkit carried)
source benchmarks/gpu/record_start.sh
P=tests/programs; K=$OUT/kineto; C=/tmp/captures; S=$OUT/stats; mkdir -p $K $C $S
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)" >> "$OUT/host.txt" 2>&1
declare -A CMD=(
  [train]="$P/torch_train_step.py --steps 6"
  [decode]="$P/host_llama_generate.py --tokens 16 --calls 2"
  [compile]="$P/torch_compile_block.py --steps 6"
)
for name in train decode compile; do
  began=$SECONDS
  timeout 200 python3 $P/kineto_trace.py --out $K/$name.json -- ${CMD[$name]} > $K/$name.log 2>&1
  echo "$name kineto: exit $? in $((SECONDS - began)) s, $(stat -c %s $K/$name.json 2>/dev/null) bytes"
  began=$SECONDS
  timeout 240 python3 -m nsprof profile --out $C/$name -- python3 ${CMD[$name]} > $C/$name.log 2>&1
  echo "$name nsprof profile: exit $? in $((SECONDS - began)) s"
  dir=$(ls -d $C/$name/*/ | head -1)
  nsys stats -q --force-overwrite true -r cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum,nvtx_sum --format csv \
    -o $S/$name $dir/nsys.sqlite > /dev/null 2>&1 || echo "$name: nsys stats failed"
done
began=$SECONDS
timeout 200 python3 $P/kineto_trace.py --out $K/tb --gzip -- ${CMD[decode]} > $K/tb.log 2>&1
echo "decode tensorboard: exit $? in $((SECONDS - began)) s"; ls -la $K/tb
began=$SECONDS
timeout 200 python3 $P/kineto_trace.py --out /tmp/long.json -- $P/host_llama_generate.py --tokens 48 --calls 1 > $K/long.log 2>&1
echo "long decode: exit $? in $((SECONDS - began)) s, $(stat -c %s /tmp/long.json) bytes"
gzip -c /tmp/long.json > $OUT/long-decode.json.gz
began=$SECONDS
timeout 200 python3 - > $K/jax.log 2>&1 <<'EOF'
import runpy, sys, jax
jax.profiler.start_trace("/tmp/jax-trace", create_perfetto_trace=True)
sys.argv = ["jax_mlp_train.py", "--steps", "6"]
runpy.run_path("tests/programs/jax_mlp_train.py", run_name="__main__")
jax.profiler.stop_trace()
EOF
echo "jax: exit $? in $((SECONDS - began)) s"; find /tmp/jax-trace -type f | xargs ls -la
mkdir -p $OUT/jax; find /tmp/jax-trace -name "*.json.gz" -exec cp {} $OUT/jax/ \;
# the captures, without their .nsys-rep (the export holds what nsprof reads)
find $C -name "*.nsys-rep" -delete
tar cf - -C /tmp captures | xz -T16 -6 > $OUT/captures.tar.xz
mkdir -p "$FINAL"; cp -r $OUT/. "$FINAL/"
echo "done in $((SECONDS - START)) s"; ls -laR "$FINAL" | head -60
