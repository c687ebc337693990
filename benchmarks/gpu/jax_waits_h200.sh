#!/usr/bin/env bash
# Two more traces of the JAX MLP's fix (--variant workers), for a diff of three runs a side against
# the sync variant; and how jax.profiler names the host's waits for a value: float(x), np.asarray(x),
# jax.device_get(x), x.block_until_ready() and print(x), each traced alone (their host events listed).
# Run from the repository root on the GPU machine with .devkit carried; about 2 minutes.
source benchmarks/gpu/record_start.sh
P=tests/programs
T=/tmp/jax-traces; rm -rf $T; mkdir -p $T/trimmed
python3 -c "import jax, jaxlib; print('jax', jax.__version__, 'jaxlib', jaxlib.__version__)" >> "$OUT/host.txt" 2>&1
for i in 2 3; do
  timeout -k 5 150 python3 $P/jax_host_batches.py --variant workers --trace $T/mlp-workers$i 2> $T/w$i.err | tail -1 \
    | sed "s/^{/{\"trace\": \"mlp-workers$i\", /" | tee -a "$OUT/runs.jsonl"
  python3 benchmarks/trim_jax_trace.py $(find $T/mlp-workers$i -name vm.trace.json.gz) $T/trimmed/mlp-workers$i.trace.json.gz
done
timeout -k 5 120 python3 - <<'PY' > "$OUT/wait-names.txt" 2>&1
import glob, gzip, json, collections
import jax, jax.numpy as jnp, numpy as np
x = jnp.ones((4096, 4096)); f = jax.jit(lambda a: (a @ a).sum())
float(f(x))  # compiled outside the traces
reads = {"float": float, "np.asarray": np.asarray, "jax.device_get": jax.device_get,
         "block_until_ready": lambda value: value.block_until_ready(), "print": print}
for label, read in reads.items():
    folder = f"/tmp/jax-waits/{label}"
    jax.profiler.start_trace(folder)
    for _ in range(3):
        read(f(x))
    jax.profiler.stop_trace()
    trace = glob.glob(f"{folder}/plugins/profile/*/*.trace.json.gz")[0]
    events = json.load(gzip.open(trace))["traceEvents"]
    hosts = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name" and e["args"]["name"] == "/host:CPU"}
    names = collections.Counter(e["name"] for e in events if e.get("ph") == "X" and e.get("pid") in hosts and not e["name"].startswith("$"))
    print(label, json.dumps(sorted(n for n, c in names.items() if c == 3)))
PY
cat "$OUT/wait-names.txt" | cut -c1-3000
tar czf "$FINAL/traces.tgz" -C $T/trimmed .
tar czf "$FINAL/texts.tgz" -C /tmp record
echo "took $((SECONDS - START)) s"
