"""Write the record of the JAX MLP's fix (benchmarks/records/2026-11-29-h200-jax-fix/): the plain runs
of the program and of its fixed variant on the H200, what nsprof says of their jax.profiler traces
(tests/data/jax/), and the pairing of a trace with an nsys capture of the same program.

    python3 benchmarks/jax_fix_record.py

The GPU runs: `bash benchmarks/gpu/jax_fix_pair_h200.sh` and `bash benchmarks/gpu/jax_waits_h200.sh`
(their output is runs.jsonl, host-*.txt, wait-names.txt, resnet.txt and nsys-profile.txt here).
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "benchmarks" / "records" / "2026-11-29-h200-jax-fix"
JAX = ROOT / "tests" / "data" / "jax"
COMMANDS = ("DEADLINE=500 bash benchmarks/gpu/jax_fix_pair_h200.sh", "bash benchmarks/gpu/jax_waits_h200.sh")


def nsprof(*args: str) -> dict:
    sys.path.insert(0, str(ROOT))
    from typer.testing import CliRunner

    from nsprof.cli import app

    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def loop_diff() -> dict:
    """`nsprof diff` of three sync runs against three of the fix (their traces)."""
    with tempfile.TemporaryDirectory() as scratch:
        sides = {}
        for side, names in (("sync", ["mlp-a1", "mlp-a2", "mlp-a3"]),
                            ("workers", ["mlp-workers1", "mlp-workers2", "mlp-workers3"])):
            sides[side] = Path(scratch) / side
            sides[side].mkdir()
            for name in names:
                shutil.copy(JAX / f"{name}.trace.json.gz", sides[side])
        return nsprof("diff", str(sides["sync"]), str(sides["workers"]))["loop"]


def main() -> None:
    runs = [json.loads(line) for line in (RECORD / "runs.jsonl").read_text().splitlines()]
    plain = [run for run in runs if run["trace"] == "-"]
    traced = [run for run in runs if run["trace"] != "-"]
    host = [line for name in ("host-1.txt", "host-2.txt") for line in (RECORD / name).read_text().splitlines()]
    medians = {variant: [run["median_ms"] for run in plain if run["variant"] == variant] for variant in ("sync", "workers")}
    speedup = statistics.median(medians["sync"]) / statistics.median(medians["workers"])
    verdicts = {name: nsprof("analyze", str(JAX / f"{name}.trace.json.gz"))["host"] for name in ("mlp-a1", "mlp-workers1")}
    loop = loop_diff()
    record = {"date": "2026-11-29", "card": "NVIDIA H200 (nvidia-h200)", "host": host,
              "commands": [f"{command} (on the GPU machine)" for command in COMMANDS] + ["python3 benchmarks/jax_fix_record.py"],
              "plain": plain, "traced": traced, "plain_speedup": round(speedup, 2),
              "verdicts": {name: {"verdict": doc["verdict"]["verdict"], "first_fix": doc["fixes"][0]["fix"]}
                           for name, doc in verdicts.items()},
              "diff_loop": loop}
    (RECORD / "h200-jax-fix.json").write_text(json.dumps(record, indent=2) + "\n")
    lines = ["# A JAX program fed by the host, its fix, and nsprof's words on both (H200)", "",
             f"2026-11-29, NVIDIA H200 (nvidia-h200), two leases: {host[1]}; {host[8]}. "
             f"{host[3]}; {host[4]}; {host[6]}.",
             "Made by " + " and ".join(f"`{command}`" for command in COMMANDS) + " on the GPU machine, then "
             "`python3 benchmarks/jax_fix_record.py` here; the traces, trimmed, are `tests/data/jax/` (its README).", "",
             "Plain runs of `tests/programs/jax_host_batches.py` (30 steps, the median ms a step after 3 untimed), "
             "the program (`--variant sync`: numpy makes each batch on the main thread, then the step runs) and its "
             "fix (`--variant workers`: 8 threads make the batches ahead of the step), alternated:", "",
             "| variant | median ms | min | max |", "| --- | ---: | ---: | ---: |"]
    lines += [f"| {run['variant']} | {run['median_ms']:.2f} | {run['min_ms']:.2f} | {run['max_ms']:.2f} |" for run in plain]
    first = verdicts["mlp-a1"]
    lines += ["", f"The fix is {speedup:.1f} times as fast (median of medians). What nsprof said of the program's trace "
              f"(`nsprof analyze tests/data/jax/mlp-a1.trace.json.gz`): {first['verdict']['verdict']}, GPU busy "
              f"{first['verdict']['evidence']['busy_pct']:.1f}%; first fix: {first['fixes'][0]['fix']}.", "",
              f"`nsprof diff` of three traced runs a side (mlp-a1..3, traced in an earlier lease on another H200: "
              f"`benchmarks/records/2026-11-29-h200-jax-traces/`, against mlp-workers1..3): an iteration "
              f"{loop['a_median_ns'] / 1e6:.1f} ms -> {loop['b_median_ns'] / 1e6:.2f} ms ({loop['change_pct']:+.1f}%, "
              f"95% interval {loop['ci_low_pct']:+.1f}% to {loop['ci_high_pct']:+.1f}%): {loop['status']}. The fixed "
              f"trace still reads {verdicts['mlp-workers1']['verdict']['verdict']}: the threads make a batch every "
              "4 ms or so, and the GPU's step takes about 1 ms.", "",
              "Traced runs (each run's own timing, under jax.profiler):", "",
              "| trace | variant | median ms |", "| --- | --- | ---: |"]
    lines += [f"| {run['trace']} | {run['variant']} | {run['median_ms']:.2f} |" for run in traced]
    lines += ["", "Also here: `resnet.txt`, the two ResNet-50 runs (8 steps, batch 64, 224x224) whose traces are "
              "`tests/data/jax/resnet50-1` and `-2` (XLA's autotuner kept other convolution algorithms in each); "
              "`nsys-profile.txt`, `nsprof profile --tool nsys` of the sync program (its export is "
              "`tests/data/jax/mlp-nsys.sqlite.xz`; a second run traced by jax.profiler inside nsys lost every GPU "
              "event: `tests/data/jax/mlp-under-nsys.trace.json.gz`); `wait-names.txt`, the host events "
              "jax.profiler writes for float(x), np.asarray(x), jax.device_get(x), print(x) (each "
              "`np.asarray(jax.Array)`) and x.block_until_ready() (`LocalDeviceState::WaitFor`, which XLA also "
              "writes inside every execution, so nsprof does not read it as a wait).", ""]
    (RECORD / "h200-jax-fix.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
