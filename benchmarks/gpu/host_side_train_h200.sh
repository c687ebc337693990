#!/usr/bin/env bash
# The synchronization case of the host-side captures again, with a CPU share much smaller than the GPU's
# step (tests/programs/host_train_sync.py's defaults): plain runs, then nsys captures of both forms.
source benchmarks/gpu/record_start.sh
P=tests/programs; C=/tmp/host-captures; mkdir -p $C
for i in 1 2; do for sync in item none; do timeout 120 python3 $P/host_train_sync.py --sync $sync 2>&1 | tail -1; done; done | tee "$OUT/plain-train.txt"
for sync in item none; do
  name=train-$([ $sync = item ] && echo sync || echo nosync)
  timeout 300 nsys profile -t cuda,nvtx,osrt --export=sqlite -o $C/$name --force-overwrite=true \
    python3 $P/host_train_sync.py --sync $sync > $C/$name.nsys.log 2>&1; tail -2 $C/$name.nsys.log
  nsys stats -q -r cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum --format csv -o $C/$name-stats $C/$name.sqlite > /dev/null 2>&1
done
tar cf - --exclude="*.nsys-rep" -C /tmp host-captures record | xz -T16 -6 > "$FINAL/train-captures.tar.xz"
ls -la "$FINAL"; echo "took $((SECONDS - START)) s"
