"""A profile directory's layout, named once: nsprof.capture writes these files and nsprof.parse
reads them (neither imports the other, and neither restates a name)."""

from __future__ import annotations

MANIFEST = "manifest.json"  # what ran, with what, on which GPU (nsprof.capture.manifest)
MANIFEST_VERSION = 1  # bumped when a reader would misread an older manifest
NSYS_REPORT = "nsys"  # nsys adds .nsys-rep and, with --export=sqlite, .sqlite
NCU_REPORT = "ncu"  # ncu adds .ncu-rep
NCU_CSV = "ncu-raw.csv"  # the raw page, for a machine without NVIDIA's ncu-report
NCU_DETAILS_CSV = "ncu-details.csv"  # the rule results, likewise
CPU_TOOL = "cpu"  # the steps that time CPU stages and measure the host's roofs: no profiler, the host alone
CPU_CEILINGS = "ceilings-cpu.json"  # `nsprof ceilings --cpu --json`, measured beside the CPU stages
PIPELINE_RESULTS = "pipeline.json"  # what `nsprof pipeline` measured, where it made the capture
TRITON_CACHE = "triton-cache"  # the program's Triton cache during the nsys run (nsprof.parse.triton_cache)
RUNS_DIR = "runs"  # runs 2..N of `--runs N`: runs/nsys-K.nsys-rep, .sqlite, .log (and bench-nsys-K.json)


def bench_results_name(tool: str, run: int | None = None) -> str:
    """The bench record of a capture's `tool` pass (bench-nsys.json, bench-cpu.json), or of its
    further run `run` (bench-nsys-K.json, under RUNS_DIR)."""
    return f"bench-{tool}.json" if run is None else f"bench-{tool}-{run}.json"


BENCH_RESULTS = bench_results_name("nsys")  # the nsys pass's: its stages' tuning is read from it
CPU_RESULTS = bench_results_name(CPU_TOOL)  # the CPU stages', timed beside the capture
