"""The found-loops record (h200-found-loops.md and .json in benchmarks/records/2026-11-29-h200-found-loops/):
programs captured as users capture them (`nsys profile python3 PROG.py`, nsys's defaults, no NVTX range;
benchmarks/gpu/loops_h200.sh on an H200, captures committed in tests/data/loops), what nsprof finds in
each (its loop, phases, verdict and first fix, read now from the committed captures), beside what
each program printed of its own time per iteration, plainly and under nsys (plain.jsonl and
captured.jsonl beside the record, as the GPU machine wrote them).

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
}
PAIRS = (("transformer-train", "transformer-train-graphs"), ("dataloader", "dataloader-w8"),
         ("cupy-heat", "cupy-heat-fused"))
LOST = "jax-mlp-lost"  # jax_mlp_train.py --steps 30 --no-markers: nsys failed to process it


def _runs(name: str) -> list[dict]:
    return [json.loads(line) for line in (RECORD / name).read_text().splitlines() if line.strip()]


def _plain(program: str, variant: str) -> dict | None:
    stem = program.removesuffix(".py")
    return next((run for run in _runs("plain.jsonl") if run["program"] == stem and run["variant"] == variant), None)


def _analyzed(name: str) -> dict:
    result = CliRunner().invoke(app, ["analyze", str(CAPTURES / f"{name}.sqlite.xz"), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _row(name: str) -> dict:
    program, arguments, variant, what = PROGRAMS[name]
    doc = _analyzed(name)
    iterations, host = doc["iterations"], doc["host"]
    captured = next((run for run in _runs("captured.jsonl") if run["capture"] == name), None)
    plain = _plain(program, variant) if "--markers" not in arguments else None
    startup = next((phase for phase in doc["phases"] if phase["name"] == "start-up"), None)
    return {
        "capture": name, "command": f"python3 tests/programs/{program} {arguments}".strip(), "what": what,
        "program_iterations": (captured or plain or {}).get("iterations"),
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
              "commands": ["bash benchmarks/gpu/loops_h200.sh (DEADLINE=400, on the GPU machine)",
                           "python3 benchmarks/found_loops_record.py"],
              "capture_options": "nsys profile --export=sqlite (nsys's defaults otherwise)",
              "programs": rows, "pairs": pairs, "lost": {"capture": LOST, "refused": _lost(),
                                                          "plain": (RECORD / "plain-jax.txt").read_text().strip()}}
    OUT.with_suffix(".json").write_text(json.dumps(record, indent=2) + "\n")
    OUT.with_suffix(".md").write_text(_markdown(record))


def _machine(host: list[str]) -> str:
    """The driver, power, bus and versions, from host.txt's lines (nvidia-smi's CSV, nsys, packages)."""
    driver, power, _, gen, width = (part.strip() for part in host[3].split(","))
    versions = "; ".join(line.replace("NVIDIA Nsight Systems version", "nsys") for line in host[4:] if line.strip())
    return f"driver {driver}, {power.replace('.00', '')}, PCIe gen {gen} x{width}; {versions}"


def _markdown(record: dict) -> str:
    lines = ["# Loops found in captures with no markers (H200)", "",
             f"{record['date']}, {record['card']}; {_machine(record['host'])}.",
             f"Captured with `{record['capture_options']}`; made by `{record['commands'][0]}`, then "
             f"`{record['commands'][1]}` (the analysis of the committed captures in `tests/data/loops`).", "",
             "Each program ran plainly once and once under nsys; each prints its own median time per iteration "
             "(its docstring says how it times). nsprof read each capture without markers:", "",
             "| capture | program | ran | found | median found | plain median | verdict | GPU busy | first fix |",
             "| --- | --- | ---: | --- | ---: | ---: | --- | ---: | --- |"]
    for row in record["programs"]:
        found = row["iterations"]
        plain = "-" if row["plain_median_ms"] is None else f"{row['plain_median_ms']:.3f} ms"
        lines.append(f"| {row['capture']} | {row['what']} | {row['program_iterations']} | {found['count']} "
                     f"({found['source']}, {found['confidence']}) | {found['median_ns'] / 1e6:.3f} ms | {plain} | "
                     f"**{row['verdict']}** | {row['busy_pct']:.1f}% | {row['first_fix'] or '-'} |")
    check = record["programs"][-1]["iterations"]["check"]
    lines += ["", "`ran`: the iterations the program ran (softmax-bench: do_bench's calls of both kernels at all four "
              "sizes; the loop found is one size's timed calls, a cache flush and the kernel). `median found`: the "
              "steady state's iterations in the capture, under nsys; `plain median`: what the program printed "
              "without nsys (nsys's defaults, CPU sampling and OS runtime tracing included, slow the launch-bound "
              "programs: the transformer printed 17.7 ms a step under nsys). The marked run's markers decide its "
              f"iterations; the loop found in its GPU work has {check['found']} iterations, {check['matched']} of the "
              f"{check['markers']} marked steps holding exactly one's start.", "",
              "## The first fix, applied", "",
              "| program | first fix | fixed variant | plain ms per iteration | found ms per iteration |",
              "| --- | --- | --- | ---: | ---: |"]
    for pair in record["pairs"]:
        plain, found = pair["plain_ms"], pair["found_ms"]
        lines.append(f"| {pair['program']} | {pair['first_fix']} | {pair['fixed']} | {plain[0]:.3f} -> {plain[1]:.3f} | "
                     f"{found[0]:.3f} -> {found[1]:.3f} |")
    lines += ["", "## What the host did in the GPU's idle time", "",
              "The launching threads' CPU samples in the steady state's idle stretches (nsys's defaults sample "
              "them), by activity (nsprof.analyze.host_activity):", "", "| capture | activities |", "| --- | --- |"]
    for row in record["programs"]:
        shares = ", ".join(f"{part['activity']} {part['pct']:.0f}%" for part in row["host_activity"] or [])
        lines.append(f"| {row['capture']} | {shares or 'no samples in its idle time'} |")
    lines += ["", "## Start-up", "", "| capture | start-up | its host time by CUDA call kind, and the rest |",
              "| --- | ---: | --- |"]
    for row in record["programs"]:
        parts = ", ".join(f"{part['part']} {part['host_ns'] / 1e6:,.1f} ms" for part in row["startup_parts"] or [])
        lines.append(f"| {row['capture']} | {row['startup_ns'] / 1e9:.2f} s | {parts} |")
    lost = record["lost"]
    lines += ["", "## A capture nsys failed to process", "",
              f"`jax_mlp_train.py --steps 30 --no-markers` under nsys's defaults (plainly: {lost['plain']}). "
              f"nsprof refuses `{lost['capture']}` in every command: \"{lost['refused']}\"", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
