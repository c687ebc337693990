#!/usr/bin/env bash
# Captures for the host-side analysis (why the GPU waits): programs that each construct one case
# (tests/programs/host_*.py), each run plainly and under nsys, and the overhead of nsys's host-side
# options on the eager decode (the program prints its own median host time per token).
# Run from the repository root on the GPU machine with .devkit carried; results in $OUT.
source benchmarks/gpu/record_start.sh
P=tests/programs
nsys analyze --help-rules > "$OUT/nsys-analyze-rules.txt" 2>&1
nsys profile --help > "$OUT/nsys-profile-help.txt" 2>&1
tar czf "$FINAL/texts.tgz" -C /tmp record
# the fixtures: every program under nsys with the host-side options
C=/tmp/host-captures; mkdir -p $C
cap() {  # $1: name, rest: program and arguments
  local name=$1; shift
  timeout 300 nsys profile -t cuda,nvtx,osrt --python-backtrace=cuda --export=sqlite -o $C/$name \
    --force-overwrite=true python3 "$@" > $C/$name.nsys.log 2>&1 || echo "$name: exit $?" >> $C/$name.nsys.log
  [ -f $C/$name.sqlite ] || timeout 300 nsys profile -t cuda,nvtx,osrt --export=sqlite -o $C/$name \
    --force-overwrite=true python3 "$@" >> $C/$name.nsys.log 2>&1
  tail -3 $C/$name.nsys.log
  nsys stats -q -r cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,osrt_sum --format csv -o $C/$name-stats $C/$name.sqlite > /dev/null 2>&1
  nsys analyze -q -r cuda_api_sync,cuda_memcpy_sync,cuda_memcpy_async,gpu_gaps,gpu_time_util --format csv -o $C/$name-rules $C/$name.sqlite > /dev/null 2>&1
  python3 - "$C/$name.sqlite" > $C/$name-schema.txt <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for (t,) in c.execute("select name from sqlite_master where type='table' order by name"):
    cols = [r[1] for r in c.execute(f"pragma table_info('{t}')")]
    print(t, c.execute(f"select count(*) from [{t}]").fetchone()[0], cols)
PY
}
cap decode-eager $P/host_decode.py --mode eager
cap decode-graph $P/host_decode.py --mode graph
cap train-sync $P/host_train_sync.py --sync item
cap train-nosync $P/host_train_sync.py --sync none
cap copies-pageable $P/host_copies.py --memory pageable
cap copies-pinned $P/host_copies.py --memory pinned
cap gpu-bound $P/host_gpu_bound.py
cap llama-generate $P/host_llama_generate.py
ls -la $C
tar cf - --exclude="*.nsys-rep" -C /tmp host-captures | xz -T16 -6 > /tmp/host-captures.tar.xz
ls -la /tmp/host-captures.tar.xz
split -b 15M -d /tmp/host-captures.tar.xz "$FINAL/host-captures.tar.xz."
echo "captures took $((SECONDS - START)) s"
plain() { echo "== plain $*"; timeout 120 python3 "$@" 2>&1 | tail -2; }
{
  for i in 1 2; do plain $P/host_decode.py --mode eager; done
  plain $P/host_decode.py --mode graph
  plain $P/host_train_sync.py --sync item; plain $P/host_train_sync.py --sync none
  plain $P/host_copies.py --memory pageable; plain $P/host_copies.py --memory pinned
  plain $P/host_gpu_bound.py
  plain $P/host_llama_generate.py
} > "$OUT/plain.txt" 2>&1
cat "$OUT/plain.txt"
# nsys's options, one at a time, on the eager decode (two runs of each)
overhead() {  # $1: label, rest: nsys options
  local label=$1; shift
  for i in 1 2; do
    echo "== $label run $i: nsys $*"
    timeout 180 nsys profile "$@" --export=none -o /tmp/ovh-$label-$i --force-overwrite=true \
      python3 $P/host_decode.py --mode eager 2>&1 | grep -E "median|rror|nvalid|unrecog" | head -3
    ls -la /tmp/ovh-$label-$i.nsys-rep 2>/dev/null | awk '{print "report bytes", $5}'
  done
}
{
  overhead base -t cuda,nvtx
  overhead osrt -t cuda,nvtx,osrt
  overhead pybt -t cuda,nvtx --python-backtrace=cuda
  overhead pysamp -t cuda,nvtx --python-sampling=true
  overhead graphnode -t cuda,nvtx --cuda-graph-trace=node
} > "$OUT/overhead.txt" 2>&1
cat "$OUT/overhead.txt"
tar czf "$FINAL/texts.tgz" --exclude="*.sqlite" --exclude="*.nsys-rep" -C /tmp record host-captures
echo "took $((SECONDS - START)) s"
