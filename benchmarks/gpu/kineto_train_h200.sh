#!/usr/bin/env bash
# The training step over 30 steps, traced by torch.profiler and captured by nsprof profile (nsys, then
# ncu on its hot kernels), with nsys stats as the oracle: the pair the Kineto reader's tests compare
# (a steady state long enough that start-up's module loading, which torch.profiler does not trace,
# is a small part of it).   bash benchmarks/gpu/kineto_train_h200.sh   (.devkit carried)
source benchmarks/gpu/record_start.sh
P=tests/programs; W=/tmp/train30; mkdir -p $W/stats
[ "${SKIP_KINETO:-0}" = 1 ] || timeout 200 python3 $P/kineto_trace.py --out $W/train.json -- $P/torch_train_step.py --steps 30 > $W/kineto.log 2>&1
echo "kineto: exit $?, $(stat -c %s $W/train.json) bytes"
timeout 240 python3 -m nsprof profile --out $W/capture -- python3 $P/torch_train_step.py --steps 30 > $W/profile.log 2>&1
echo "nsprof profile: exit $?"
dir=$(ls -d $W/capture/*/ | head -1)
nsys stats -q --force-overwrite true -r cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum,nvtx_sum --format csv -o $W/stats/train $dir/nsys.sqlite > /dev/null 2>&1
find $W -name "*.nsys-rep" -delete; rm -f $dir/ncu.ncu-rep
cp $OUT/host.txt $W/
tar cf - -C /tmp train30 | xz -T16 -6 > "$FINAL/train30.tar.xz"
echo "done in $((SECONDS - START)) s"; ls -la "$FINAL"
