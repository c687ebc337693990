"""`pipeline`: the whole flow of a matrix product, host to host, against the bus floor, with the
breakdown of an nsys capture of the same flows."""

from __future__ import annotations

from pathlib import Path

from nsprof.errors import UsageError
from nsprof.paths import PROFILES_DIR
from nsprof.verbs.common import workload_argv

CAPTURED_FLOWS = 10  # flows per variant (and as many untimed ones before) in the pipeline's nsys capture


def pipeline(op: str = "sgemm", stages: list[str] | None = None, size: str = "1024", *, chunks: int = 4,
             repeat: int | None = None, warmup: int | None = None, cold: bool = True,
             capture: bool = True, out: str | Path = PROFILES_DIR, nsys: str | None = None, cpu: bool = True,
             progress=lambda message: None) -> dict:
    """The whole flow of a matrix product, host to host, in every variant (nsprof.ladder_runs.pipeline),
    against the bus floor, with the breakdown of an nsys capture of the same flows (GPU).

    Default stages: the fastest stage that verifies at this size, and the library's (cuBLAS) in its precision.
    With `cpu`, the op's CPU BLAS stage (v0blas) times the same product in host memory, and each
    flow's `x_cpu_blas` says how many times faster the whole flow was, copies included.
    Returns its JSON document, {"records", "floor", "gpu", "profile" (the capture's directory or None),
    "breakdown" (where it came from, or why there is none), "cpu" (the CPU BLAS's record, or None)},
    which the capture's directory keeps as pipeline.json."""
    from nsprof.analyze.pipeline import against_floor, bus_floor
    from nsprof.analyze.pipeline_types import BusFloor
    from nsprof.ceilings.resolve import resolve_ceiling
    from nsprof.ladder.registry import get_op, select_stages
    from nsprof.ladder_runs.pipeline import cold_record, measure_pipeline
    from nsprof.launch.gpu import device_info
    from nsprof.launch.tools import launch_tools
    from nsprof.sizes import parse_sizes

    spec = get_op(op)
    if spec.dims != "MxNxK":
        raise UsageError(f"{op} is not a matrix product: the pipeline multiplies two matrices",
                         "choose --op sgemm or --op hgemm")
    [parsed] = parse_sizes([size], spec.dims)
    named = select_stages(op, stages) if stages else []
    if on_cpu := [s.stage for s in named if s.kind.on_host]:
        raise UsageError(f"{', '.join(on_cpu)}: a CPU stage has no GPU flow (no copies, no device)",
                         "choose GPU stages; `nsprof bench` times the CPU stages")
    env = device_info()
    tools = launch_tools()
    chosen = named or _fastest_and_library(op, parsed, progress)
    records = []
    for stage in chosen:
        records += measure_pipeline(stage, parsed, tools, chunks=chunks, repeat=repeat, warmup=warmup, progress=progress)
        if cold:
            progress(f"{stage.stage} cold, in a fresh process")
            records.append(cold_record(stage, parsed))
    ceiling = resolve_ceiling(env["device"])
    def floor_of(bytes_in: int, bytes_out: int) -> BusFloor:
        return bus_floor(bytes_in, bytes_out, ceiling)
    records = against_floor(records, floor_of)
    floor = floor_of(records[0]["bytes_in"], records[0]["bytes_out"]) if records else None
    versus = _cpu_blas(op, parsed, progress) if cpu else None
    if versus and versus["median_ms"]:
        _against_cpu_blas(records, versus["median_ms"])
    result = {"records": records, "floor": floor, "gpu": env["device"], "device": env, "profile": None,
              "breakdown": "not captured (--no-nsys)", "cpu": versus}
    if capture:
        import json

        from nsprof.output import write_atomically
        from nsprof.profile_layout import PIPELINE_RESULTS

        result.update(_pipeline_breakdown(op, chosen, parsed, chunks, records, Path(out), nsys, progress))
        if result["profile"]:  # None when nsys was not found
            write_atomically(Path(result["profile"]) / PIPELINE_RESULTS, json.dumps(result, indent=2, default=str).encode())
    return result


def _fastest_and_library(op: str, size, progress) -> list:
    """The fastest of the op's own GPU stages that verifies at `size`, and the library's stage in
    its precision (the library's alone where none verifies)."""
    from nsprof.ladder.registry import baseline_stage, baseline_stages, is_baseline_stage, select_stages
    from nsprof.ladder_runs.bench import run_bench

    progress("finding the fastest stage that verifies")
    own = [s for s in select_stages(op, None) if not is_baseline_stage(op, s.stage) and not s.kind.on_host]
    timed = [r for r in run_bench(op, own, [size], repeat=10, warmup=None, baseline=False) if r["status"] == "ok"]
    fastest = min(timed, key=lambda r: r["median_ms"])["stage"] if timed else None
    chosen = select_stages(op, [fastest]) if fastest else []
    return [*chosen, baseline_stage(op, chosen[0].precision.name) if chosen else baseline_stages(op)[0]]


def _against_cpu_blas(records: list[dict], blas_ms: float) -> None:
    """Each flow's `x_cpu_blas`: how many times faster than the CPU's BLAS it was, copies included
    (seed 000's question: is the GPU faster than the CPU?)."""
    for record in records:
        flow_ms = record.get("median_ms") or record.get("wall_ms")
        record["x_cpu_blas"] = blas_ms / flow_ms if flow_ms else None


def _cpu_blas(op: str, size, progress) -> dict | None:
    """The op's CPU BLAS stage (v0blas) on the same product, timed on this host ({"stage",
    "median_ms", "cpu", "message"}); None where the op has no CPU stage."""
    from nsprof.ladder.cpu_roles import CPU_BLAS, cpu_role
    from nsprof.ladder.registry import stages_for
    from nsprof.ladder_runs.bench import run_bench
    from nsprof.ladder_runs.cpu_stage import host_info

    blas = next((s for s in stages_for(op) if s.kind.on_host and cpu_role(s) == CPU_BLAS), None)
    if blas is None:
        return None
    progress(f"{blas.stage}: the CPU's BLAS on the same product")
    [record] = run_bench(op, [blas], [size])
    return {"stage": blas.stage, "median_ms": record["median_ms"], "cpu": host_info()["cpu"], "message": record["message"]}


def _pipeline_breakdown(op, stages, size, chunks, records, out: Path, nsys, progress) -> dict:
    """Run the same flows under nsys (graphs traced node by node) into a profile directory, and
    join each variant's median breakdown to its record."""
    from nsprof.analyze.gpu_events import gpu_events
    from nsprof.analyze.pipeline import flow_breakdown
    from nsprof.capture.commands import UNHELD_ENV
    from nsprof.capture.program import ProgramRequest
    from nsprof.capture.session import capture_program
    from nsprof.capture.tools import find_tool
    from nsprof.errors import ToolNotFoundError
    from nsprof.profile_analysis import opened_profile
    from nsprof.ranges import PIPELINE_PREFIX, pipeline_range
    from nsprof.sizes import short_size

    try:
        find_tool("nsys", nsys)
    except ToolNotFoundError:
        return {"breakdown": "no breakdown: nsys was not found (install Nsight Systems, or pass --nsys PATH)"}
    argv = workload_argv("pipeline", {"op": op, "stages": [s.stage for s in stages], "size": short_size(size),
                                      "chunks": chunks, "repeat": CAPTURED_FLOWS, "warmup": CAPTURED_FLOWS})
    request = ProgramRequest(argv=tuple(argv), tools=("nsys",), metrics=(), clock_control="none", ranges=(), kernel=None,
                             launch_count=1, label=f"pipeline-{op}-{short_size(size)}",
                             nsys_options=("--cuda-graph-trace=node",), env=UNHELD_ENV)
    progress("capturing the flows under nsys")
    directory, _ = capture_program(request, out, {"nsys": nsys}, progress=progress)
    export = opened_profile(directory).timelines[0]
    breakdown = flow_breakdown(export, gpu_events([export]), PIPELINE_PREFIX + "/").set_index("range")
    for record in records:
        name = pipeline_range(op, record["stage"], record["variant"], size)
        if name in breakdown.index:
            record.update({key: float(value) for key, value in breakdown.loc[name].items() if key != "flows"})
    return {"profile": str(directory),
            "breakdown": f"nsys capture of the same flows in {directory} (median of {CAPTURED_FLOWS} flows each)"}
