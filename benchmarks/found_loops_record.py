"""The found-loops record (h200-found-loops.md and .json in benchmarks/records/2026-11-29-h200-found-loops/):
programs captured as users capture them (`nsys profile python3 PROG.py`, nsys's defaults, no NVTX range;
benchmarks/gpu/loops_h200.sh and, for the LLM's decode, the marked runs, JAX under nsprof profile and the
torch.profiler trace, benchmarks/gpu/loops_more_h200.sh, on H200s; captures committed in tests/data/loops),
what nsprof finds in each (its loop, phases, verdict and first fix, read now from the committed captures),
beside what each program printed of its own time per iteration, plainly and under nsys (plain*.jsonl and
captured*.jsonl beside the record, as the GPU machine wrote them), and what nsys's options cost
(cost.jsonl).

    python3 benchmarks/found_loops_record.py    # rewrites both files from the captures and the runs
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from nsprof.cli import app
from nsprof.errors import ParseError
from nsprof.parse.nsys_sqlite import load_nsys
from nsprof.parse.packed import unpacked_copy

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "tests" / "data" / "loops"
RECORD = ROOT / "benchmarks" / "records" / "2026-11-29-h200-found-loops"
OUT = RECORD / "h200-found-loops"  # .md and .json
# capture: (program, arguments, variant in the programs' JSON lines, what it is)
PROGRAMS = {
    "transformer-train": ("loop_transformer_train.py", "--variant eager --steps 60", "eager",
                          "a small transformer trained 60 steps, loss.item() each step"),
    "transformer-train-graphs": ("loop_transformer_train.py", "--variant graphs --steps 60", "graphs",
                                 "the same step captured once as a CUDA graph and replayed"),
    "dataloader": ("loop_dataloader.py", "--workers 0 --steps 30", "workers0",
                   "a small CNN fed by DataLoader(num_workers=0) with numpy augmentation"),
    "dataloader-w8": ("loop_dataloader.py", "--workers 8 --steps 30", "workers8", "the same with 8 workers"),
    "cupy-heat": ("loop_cupy_heat.py", "--variant eager --steps 300", "eager",
                  "a CuPy heat equation, 14 small kernels a step"),
    "cupy-heat-fused": ("loop_cupy_heat.py", "--variant fused --steps 300", "fused", "the same step as one kernel"),
    "softmax-bench": ("loop_softmax_bench.py", "", "triton-vs-torch",
                      "Triton's fused softmax against torch.softmax under do_bench, four sizes"),
    "transformer-train-marked": ("loop_transformer_train.py", "--variant eager --steps 60 --markers", "eager",
                                 "the transformer with an NVTX range `step` around each step: the truth to check"),
    "dataloader-marked": ("loop_dataloader.py", "--workers 0 --steps 30 --markers", "workers0",
                          "the data loader with a `step` range around each step: the truth"),
    "cupy-heat-marked": ("loop_cupy_heat.py", "--variant eager --steps 300 --markers", "eager",
                         "the CuPy loop with a `step` range around each step: the truth"),
    "llm-generate": ("loop_llm_generate.py", "--variant eager", "eager",
                     "transformers' Llama (4 layers, random weights) generating 4 x 64 tokens, eager"),
    "llm-generate-static": ("loop_llm_generate.py", "--variant static", "static",
                            "the same with a static cache, each decode step a CUDA graph (torch.compile)"),
    "llm-generate-marked": ("loop_llm_generate.py", "--variant eager --markers", "eager",
                            "the eager decode with a `step` range around each forward pass: the truth"),
    "jax-mlp": ("jax_mlp_train.py", "--steps 30 --no-markers", None,
                "a JAX MLP trained 30 steps, no range of its own (XLA's stay)"),
    "jax-mlp-marked": ("jax_mlp_train.py", "--steps 30", None, "the same with the program's `step` range: the truth"),
    "transformer-train-kineto.json.gz": ("loop_transformer_train.py", "--variant eager --steps 30 --torch-profiler DIR",
                                         "eager", "the transformer traced by torch.profiler, 30 steps"),
}
# how each capture was taken, where not with nsys's defaults
OPTIONS = {"jax-mlp": "nsprof profile --tool nsys (-t cuda,nvtx --cuda-graph-trace=node)",
           "jax-mlp-marked": "nsprof profile --tool nsys (-t cuda,nvtx --cuda-graph-trace=node)",
           "transformer-train-kineto.json.gz": "torch.profiler (CPU and CUDA), prof.step() each step"}
# jax_mlp_train.py prints no JSON line, and the trace's run printed one with no capture name: their --steps
PROGRAM_RUNS = {"jax-mlp": 30, "jax-mlp-marked": 30, "transformer-train-kineto.json.gz": 30}
PAIRS = (("transformer-train", "transformer-train-graphs"), ("dataloader", "dataloader-w8"),
         ("cupy-heat", "cupy-heat-fused"), ("llm-generate", "llm-generate-static"))
LOST = "jax-mlp-lost"  # jax_mlp_train.py --steps 30 --no-markers: nsys failed to process it


def _runs(*names: str) -> list[dict]:
    return [json.loads(line) for name in names for line in (RECORD / name).read_text().splitlines() if line.strip()]


def _plain(program: str, variant: str | None) -> dict | None:
    """The program's plain run: the LLM's from the run of both variants side by side (plain-pair.jsonl,
    its first of each), the others' from their first round."""
    stem = program.removesuffix(".py")
    return next((run for run in _runs("plain-pair.jsonl", "plain.jsonl", "plain-more.jsonl")
                 if run["program"] == stem and run["variant"] == variant and "--torch-profiler" not in run), None)


def _analyzed(name: str) -> dict:
    path = CAPTURES / (name if "." in name else f"{name}.sqlite.xz")
    result = CliRunner().invoke(app, ["analyze", str(path), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _row(name: str) -> dict:
    program, arguments, variant, what = PROGRAMS[name]
    doc = _analyzed(name)
    iterations, host = doc["iterations"], doc["host"]
    captured = next((run for run in _runs("captured.jsonl", "captured-more.jsonl") if run["capture"] == name), None)
    plain = _plain(program, variant) if "--markers" not in arguments and name not in OPTIONS else None
    startup = next((phase for phase in doc["phases"] if phase["name"] == "start-up"), None)
    found = doc["loop"]["found"] or {}
    return {
        "capture": name, "command": f"python3 tests/programs/{program} {arguments}".strip(), "what": what,
        "options": OPTIONS.get(name, "nsys's defaults"),
        "program_iterations": PROGRAM_RUNS.get(name) or (captured or plain or {}).get("iterations"),
        "found_too": found.get("count"),
        "plain_median_ms": plain and plain["median_ms"], "captured_median_ms": captured and captured["median_ms"],
        "iterations": {key: iterations[key] for key in ("source", "count", "confidence", "median_ns", "spread_pct",
                                                         "operations", "marker", "anchor", "drift", "check")},
        "verdict": host["verdict"]["verdict"], "busy_pct": host["verdict"]["evidence"]["busy_pct"],
        "first_fix": host["fixes"][0]["cause"] if host["fixes"] else None,
        "startup_ns": startup and startup["span_ns"], "startup_parts": startup and startup["parts"],
        "window": host["window"]["source"],
        "host_activity": host["activity"] and [{key: row[key] for key in ("activity", "pct", "samples")}
                                               for row in host["activity"]["activities"][:3]],
    }


def _lost() -> str:
    try:
        load_nsys(unpacked_copy(CAPTURES / f"{LOST}.sqlite.xz"))
    except ParseError as err:
        return err.problem.split(": ", 1)[1]
    raise AssertionError(f"{LOST} was read")


def main() -> None:
    host = (RECORD / "host.txt").read_text().splitlines()
    rows = [_row(name) for name in PROGRAMS]
    by_name = {row["capture"]: row for row in rows}
    pairs = [{"program": slow, "fixed": fast, "first_fix": by_name[slow]["first_fix"],
              "plain_ms": [by_name[slow]["plain_median_ms"], by_name[fast]["plain_median_ms"]],
              "found_ms": [by_name[slow]["iterations"]["median_ns"] / 1e6, by_name[fast]["iterations"]["median_ns"] / 1e6]}
             for slow, fast in PAIRS]
    record = {"date": "2026-11-29", "card": "NVIDIA H200 (nvidia-h200)", "host": host,
              "host_more": (RECORD / "host-more.txt").read_text().splitlines(),
              "commands": ["bash benchmarks/gpu/loops_h200.sh (DEADLINE=400, on the GPU machine)",
                           "PART=a, b, jax and pair bash benchmarks/gpu/loops_more_h200.sh (four leases)",
                           "python3 benchmarks/found_loops_record.py"],
              "capture_options": "nsys profile --export=sqlite (nsys's defaults otherwise)",
              "programs": rows, "pairs": pairs, "llm_side_by_side": _runs("plain-pair.jsonl"),
              "cost": _runs("cost.jsonl"), "jax_osrt": (RECORD / "jax-osrt-refused.txt").read_text().strip(),
              "lost": {"capture": LOST, "refused": _lost(), "plain": (RECORD / "plain-jax.txt").read_text().strip()}}
    OUT.with_suffix(".json").write_text(json.dumps(record, indent=2) + "\n")
    OUT.with_suffix(".md").write_text(_markdown(record))


def _machine(host: list[str]) -> str:
    """The driver, power, bus and versions, from host.txt's lines (nvidia-smi's CSV, nsys, packages)."""
    driver, power, _, gen, width = (part.strip() for part in host[3].split(","))
    versions = "; ".join(line.replace("NVIDIA Nsight Systems version", "nsys") for line in host[4:] if line.strip())
    return f"driver {driver}, {power.replace('.00', '')}, PCIe gen {gen} x{width}; {versions}"


def _markdown(record: dict) -> str:
    rows = {row["capture"]: row for row in record["programs"]}
    lines = ["# Loops found in captures with no markers (H200)", "",
             f"{record['date']}, {record['card']}; {_machine(record['host'])}; transformers "
             f"{next(line for line in record['host_more'] if 'transformers' in line).rsplit(' ', 1)[-1]}.",
             f"Captured with `{record['capture_options']}` unless the table says otherwise; made by "
             f"`{record['commands'][0]}`, `{record['commands'][1]}`, then `{record['commands'][2]}` (the analysis of "
             "the committed captures in `tests/data/loops`). Each lease was a machine of its own: host.txt names the "
             "first script's, host-more.txt the second's four (PART=a, b, jax, pair).", "",
             "Each program ran plainly and under nsys; each prints its own median time per iteration (its docstring "
             "says how it times). nsprof read each capture as it is:", "",
             "| capture | program | ran | iterations | found too | median | plain median | verdict | GPU busy "
             "| first fix |",
             "| --- | --- | ---: | --- | ---: | ---: | ---: | --- | ---: | --- |"]
    for row in record["programs"]:
        found = row["iterations"]
        plain = "-" if row["plain_median_ms"] is None else f"{row['plain_median_ms']:.3f} ms"
        taken = "" if row["options"] == "nsys's defaults" else f" ({row['options']})"
        source = found["source"] if found["source"] == "found" else f"marked by {found['marker']}"
        lines.append(f"| {row['capture']} | {row['what']}{taken} | {row['program_iterations']} | {found['count']} "
                     f"({source}, {found['confidence']}) | {row['found_too'] or '-'} | {found['median_ns'] / 1e6:.3f} ms "
                     f"| {plain} | **{row['verdict']}** | {row['busy_pct']:.1f}% | {row['first_fix'] or '-'} |")
    lines += ["", "`ran`: the iterations the program ran (softmax-bench: do_bench's calls of both kernels at all four "
              "sizes, the loop found being one size's timed calls, a cache flush and the kernel; the LLM's decode: "
              "4 calls of 63 decode steps, each call's prefill besides, so 256 forward passes, of which the static "
              "cache replays 251 as CUDA graphs). `found too`: the loop found in the GPU work where markers decide. "
              "`median`: the steady state's iterations in the capture, under nsys; `plain median`: what the program "
              "printed without nsys (nsys's defaults slow the launch-bound programs: the transformer printed 17.7 ms "
              "a step under nsys). Each marked run's markers decide its iterations; the loop found in its GPU work "
              "holds one start in nearly every marked one:", ""]
    for name in ("transformer-train-marked", "dataloader-marked", "cupy-heat-marked", "llm-generate-marked",
                 "jax-mlp", "jax-mlp-marked", "transformer-train-kineto.json.gz"):
        check = rows[name]["iterations"]["check"]
        lines.append(f"- {name}: {check['markers']} marked, {check['found']} found, {check['matched']} marked "
                     "instances holding exactly one found start.")
    lines += ["", "## The first fix, applied", "",
              "| program | first fix | fixed variant | plain ms per iteration | found ms per iteration |",
              "| --- | --- | --- | ---: | ---: |"]
    for pair in record["pairs"]:
        plain, found = pair["plain_ms"], pair["found_ms"]
        lines.append(f"| {pair['program']} | {pair['first_fix']} | {pair['fixed']} | {plain[0]:.3f} -> {plain[1]:.3f} | "
                     f"{found[0]:.3f} -> {found[1]:.3f} |")
    runs = ", ".join(f"{run['variant']} {run['median_ms']:.2f}" for run in record["llm_side_by_side"])
    lines += ["", f"The LLM's two variants ran plainly side by side on one machine, alternated (median ms a decode "
              f"step): {runs}. The fixed variant's compilation took {record['llm_side_by_side'][1]['first_call_ms'] / 1e3:.1f} "
              "s in its first call, which nsprof puts in start-up.",
              "", "## What the host did in the GPU's idle time", "",
              "The launching threads' CPU samples in the steady state's idle stretches (nsys samples them unless "
              "told `-s none`), by activity (nsprof.analyze.host_activity):", "", "| capture | activities |",
              "| --- | --- |"]
    for row in record["programs"]:
        shares = ", ".join(f"{part['activity']} {part['pct']:.0f}%" for part in row["host_activity"] or [])
        lines.append(f"| {row['capture']} | {shares or 'no samples'} |")
    lines += ["", "## Start-up", "",
              "| capture | start-up | its host time: CUDA calls by kind, then the main thread's samples |",
              "| --- | ---: | --- |"]
    for row in record["programs"]:
        parts = ", ".join(f"{part['part']} {part['host_ns'] / 1e6:,.1f} ms" for part in row["startup_parts"] or []
                          if part["host_ns"] >= 0.005 * row["startup_ns"])
        lines.append(f"| {row['capture']} | {row['startup_ns'] / 1e9:.2f} s | {parts} |")
    lines += ["", "Parts under 0.5% of start-up are left out (every part is in the JSON). Python's own functions "
              "read as the interpreter in native call chains: `Python` holds the model's set-up and tracing; "
              "inductor's compile workers are processes of their own, so the main thread waits, `not running`.", "",
              "## What nsys's options cost", "",
              "The launch-bound transformer (60 steps) plainly and under nsys with `nsprof profile`'s options, with "
              "OS runtime tracing added, and with CPU sampling off, two rounds alternated on one machine; each run's "
              "own median ms a step, and the samples and OS runtime calls its export holds:", "",
              "| options | round 1 | round 2 | samples | OS runtime calls |", "| --- | ---: | ---: | ---: | ---: |"]
    by_label: dict[str, list[dict]] = {}
    for run in record["cost"]:
        by_label.setdefault(run["label"], []).append(run)
    for runs in by_label.values():
        shown = runs[0]["options"] or "(plain)"
        lines.append(f"| `{shown}` | {runs[0]['run']['median_ms']:.2f} | {runs[-1]['run']['median_ms']:.2f} | "
                     f"{runs[0]['run'].get('samples', '-')} | {runs[0]['run'].get('osrt_calls', '-')} |")
    lines += ["", "`nsprof profile` keeps nsys's sampling (its samples are what says what the host did) and leaves "
              "OS runtime tracing off: under it a JAX program lost its kernels (below). The runs' spread is larger "
              "than the difference sampling makes.", ""]
    lost = record["lost"]
    lines += ["## Captures nsys failed to process", "",
              f"`jax_mlp_train.py --steps 30 --no-markers` under nsys's defaults (plainly: {lost['plain']}). "
              f"nsprof refuses `{lost['capture']}` in every command: \"{lost['refused']}\"", "",
              "The same program under `-t cuda,nvtx,osrt --cuda-graph-trace=node` (not committed): "
              f"\"{record['jax_osrt']}\"", "",
              "Under `nsprof profile --tool nsys` (`-t cuda,nvtx`) it kept its kernels, nsys reporting one processing "
              "error, which analyze states first (jax-mlp and jax-mlp-marked above).", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
