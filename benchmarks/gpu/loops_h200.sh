#!/usr/bin/env bash
# Loops to find from the GPU work alone: each program of tests/programs/loop_*.py (and jax_mlp_train.py
# --no-markers) captured as a user would, `nsys profile python3 PROG.py` with nsys's DEFAULTS (no -t, no
# option but the sqlite export) and no NVTX range of the program's own; the same with --markers (an NVTX
# range `step` per iteration, the truth to check against) for three of them; the fixed variants (a CUDA
# graph, a fused kernel) unmarked; and every variant run plainly twice first, each run's JSON line
# (iterations, warm-up, median/min/max ms per iteration) into plain.jsonl. The captures' own JSON lines,
# named, go to captured.jsonl. Then each export's tables with their row counts (NAME-schema.txt) and
# nsys stats' kernel and API summaries (NAME-stats_*.csv), all packed at the end.
# Run from the repository root on the GPU machine with .devkit carried; results gathered in /tmp/record
# ($OUT), packed into the device tool's $OUT. About 7 minutes (the plain runs about 2: a PyTorch program
# takes 5 s to start on the H200's host). It must end within 8, so no capture runs past DEADLINE seconds:
# a capture's timeout is 150 s or what is left before DEADLINE, and one with under 30 s left is skipped,
# its log saying so.
source benchmarks/gpu/record_start.sh
P=tests/programs
C=/tmp/loop-captures; rm -rf $C; mkdir -p $C
DEADLINE=${DEADLINE:-420}
nsys profile --help > "$OUT/nsys-profile-help.txt" 2>&1
python3 -c "import jax, triton; print('jax', jax.__version__, 'triton', triton.__version__)" >> "$OUT/host.txt" 2>&1
tar czf "$FINAL/texts.tgz" -C /tmp record
# plainly, twice each: the per-iteration times without nsys (each program's last line of stdout is its JSON)
plain() {
  for i in $(seq ${PLAIN_RUNS:-1}); do
    echo "== $* (run $i)" >> "$OUT/plain.err"
    timeout 120 python3 "$@" 2>> "$OUT/plain.err" | tail -1 >> "$OUT/plain.jsonl"
  done
  echo "plain $*: $((SECONDS - START)) s"
}
plain $P/loop_transformer_train.py --variant eager --steps 60
plain $P/loop_transformer_train.py --variant graphs --steps 60
plain $P/loop_dataloader.py --workers 0 --steps 30
plain $P/loop_dataloader.py --workers 8 --steps 30
plain $P/loop_cupy_heat.py --variant eager --steps 300
plain $P/loop_cupy_heat.py --variant fused --steps 300
plain $P/loop_softmax_bench.py
# jax_mlp_train.py prints a line of text, not JSON: once, into its own file, with its wall time
{ began=$SECONDS; timeout 120 python3 $P/jax_mlp_train.py --steps 30 --no-markers 2>> "$OUT/plain.err" | tail -1
  echo "wall $((SECONDS - began)) s"; } > "$OUT/plain-jax.txt"
echo "plain jax: $((SECONDS - START)) s"
cat "$OUT/plain.jsonl" "$OUT/plain-jax.txt"
# the captures: nsys's defaults; the log has nsys's output and the program's own (its JSON line)
NAMES=()
cap() {  # $1: name, rest: program and arguments
  local name=$1; shift
  local limit=$((DEADLINE - (SECONDS - START)))
  [ $limit -gt 150 ] && limit=150
  if [ $limit -lt 30 ]; then
    echo "$name: skipped, $((SECONDS - START)) s gone" | tee $C/$name.nsys.log; return
  fi
  NAMES+=("$name")
  timeout -k 10 $limit nsys profile --export=sqlite -o $C/$name --force-overwrite=true python3 "$@" \
    > $C/$name.nsys.log 2>&1 || echo "$name: exit $? (timeout $limit s)" >> $C/$name.nsys.log
  grep '^{"program"' $C/$name.nsys.log | sed "s/^{/{\"capture\": \"$name\", /" >> "$OUT/captured.jsonl"
  tail -2 $C/$name.nsys.log
  echo "$name: $((SECONDS - START)) s"
}
cap transformer-train $P/loop_transformer_train.py --variant eager --steps 60
cap dataloader $P/loop_dataloader.py --workers 0 --steps 30
cap dataloader-w8 $P/loop_dataloader.py --workers 8 --steps 30
cap cupy-heat $P/loop_cupy_heat.py --variant eager --steps 300
cap softmax-bench $P/loop_softmax_bench.py
cap transformer-train-marked $P/loop_transformer_train.py --variant eager --steps 60 --markers
cap dataloader-marked $P/loop_dataloader.py --workers 0 --steps 30 --markers
cap cupy-heat-marked $P/loop_cupy_heat.py --variant eager --steps 300 --markers
cap transformer-train-graphs $P/loop_transformer_train.py --variant graphs --steps 60
cap cupy-heat-fused $P/loop_cupy_heat.py --variant fused --steps 300
# last, as the one expected to fail in nsys's processing (its log and whatever it wrote are kept)
cap jax-mlp $P/jax_mlp_train.py --steps 30 --no-markers
# each export's tables and row counts, and nsys stats' summaries: in parallel, after every capture
post() {  # $1: name
  local name=$1
  [ -f $C/$name.sqlite ] || { echo "$name: no sqlite" | tee $C/$name-schema.txt; return; }
  timeout 40 python3 - "$C/$name.sqlite" > $C/$name-schema.txt 2>&1 <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for (t,) in c.execute("select name from sqlite_master where type='table' order by name"):
    cols = [r[1] for r in c.execute(f"pragma table_info('{t}')")]
    print(t, c.execute(f"select count(*) from [{t}]").fetchone()[0], cols)
PY
  timeout 40 nsys stats -q -r cuda_gpu_kern_sum,cuda_api_sum --format csv -o $C/$name-stats $C/$name.sqlite \
    > $C/$name-stats.log 2>&1 || echo "$name: nsys stats exit $?" >> $C/$name-stats.log
}
for name in "${NAMES[@]}"; do post "$name" & done
wait
echo "schemas and stats: $((SECONDS - START)) s"
ls -la $C | tee "$OUT/captures-ls.txt"
cat "$OUT/captured.jsonl"
# packed most useful first: what comes back is at most 64 MB, and a cut-off tail still unpacks up to the cut
ORDER=(transformer-train transformer-train-marked dataloader cupy-heat jax-mlp softmax-bench cupy-heat-marked
       dataloader-marked transformer-train-graphs cupy-heat-fused dataloader-w8)
( cd /tmp && for name in "${ORDER[@]}"; do ls loop-captures/$name.* loop-captures/$name-* 2>/dev/null | grep -v nsys-rep; done ) \
  > /tmp/pack-list.txt
tar cf - -C /tmp -T /tmp/pack-list.txt | xz -T16 -9 > /tmp/loop-captures.tar.xz
ls -la /tmp/loop-captures.tar.xz
split -b 10M -d /tmp/loop-captures.tar.xz "$FINAL/loop-captures.tar.xz."
rm -f "$FINAL"/loop-captures.tar.xz.0[6-9] "$FINAL"/loop-captures.tar.xz.[1-9]?
cp "$OUT/plain.jsonl" "$FINAL/plain.jsonl"
tar czf "$FINAL/texts.tgz" --exclude="*.sqlite" --exclude="*.nsys-rep" --exclude="*.qdstrm" -C /tmp record loop-captures
echo "took $((SECONDS - START)) s"
