"""`nsprof bench`: verify each stage of any op against float64, then time it, at each size.

Returns plain records (dicts) so that the CLI, the JSON file and the profiler all share them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from nsprof import __version__
from nsprof.errors import KernelBuildError, NsprofError, UsageError
from nsprof.ladder.registry import Stage, baseline_stage, get_op, get_stage, stages_for
from nsprof.ranges import range_name, step_range_name, verify_range_name
from nsprof.sizes import Size, size_label

Progress = Callable[[str], None]
TORCH = "torch"  # the key, beside a library stage's name, of PyTorch's launch for the same product
PAIRED, MEDIANS = "paired", "medians"  # how a record's % of cuBLAS was measured (pct_cublas_method)


def _record(stage: Stage, size: Size) -> dict:
    op = get_op(stage.op)
    return {
        "op": stage.op, "stage": stage.stage, "title": stage.title, "precision": stage.precision.name,
        **dict(zip(op.dims.lower().split("x"), size)), "size": size_label(size), "status": "not run",
        "rel_error": None, "tolerance": stage.tolerance(size), "tile": None, "split_k": None, "padded": None,
        "median_ms": None, "tflops": None, "tbytes_per_s": None, "pct_cublas": None, "pct_cublas_of": None,
        "baseline": baseline_stage(stage.op, stage.precision.name).stage, "message": None,
        "prepare": None, "prepare_ms": None, "steps_ms": None,
    }


def _failed(stage: Stage, size: Size, status: str, message: str) -> dict:
    """A record of a stage that was not timed: its status ("error", "skipped") and why."""
    record = _record(stage, size)
    record["status"], record["message"] = status, message
    return record


def _skipped(stage: Stage, size: Size, why: str) -> dict:
    record = _failed(stage, size, "skipped", why)
    record["baseline_only"] = False
    return record


def bench_stage(stage: Stage, size: Size, problem, tools, *, repeat: int | None,
                warmup: int | None, tile: str | None = None, launches: dict | None = None) -> dict:
    """Verify one stage at one size; time it only if it passed. A stage none of whose launch
    configurations this GPU can run is recorded "not available", with the reason. `tile` forces a
    launch configuration (a Triton stage then tries that one alone). `launches`: where a stage that
    verified leaves its launch (and a library stage PyTorch's too, under TORCH), to be paired with
    the library's afterwards (pair_with_library)."""
    from nsprof.ladder_runs.stage_launch import stage_launcher
    from nsprof.launch.measure import time_launches, verify

    rec = _record(stage, size)
    missing = unavailable_reason(stage, tools)
    if missing:
        rec["status"], rec["message"] = "not available", missing
        return rec
    # a forced or kept tile: an NVRTC stage's launch configuration, a Triton stage's or a library stage's candidate
    launcher = stage_launcher(stage, problem, tools, tile if len(stage.tiles) > 1 or stage.kind.vendor_library else None)
    rec["split_k"] = launcher.split_k
    rec["details"] = getattr(launcher, "details", None)  # a tuned stage's trials (Triton: and what it compiled to)
    rec["tile"], rec["padded"] = launcher.tile_label, launcher.padded_shape is not None
    prepare = launcher.prepare  # a step the stage needs first (SGEMV's transpose)
    problem.refresh()
    err = verify(launcher, problem, verify_range_name(stage.op, stage.stage, size))
    rec["rel_error"] = err
    if not err <= rec["tolerance"]:  # NaN fails too
        rec["status"] = "failed"
        rec["message"] = f"relative error {err:.3g} exceeds {rec['tolerance']:.3g}"
        return rec
    timing = time_launches(launcher.run, repeat=repeat, warmup=warmup, range_name=range_name(stage.op, stage.stage, size))
    rec.update(timing.summary())
    rec["status"] = "ok"
    # Timed alone as often as the stage (a capture then holds as many of them as of the stage's launches),
    # each in a step/... range of its own
    def alone(name: str, launch) -> float:
        return time_launches(launch, repeat=repeat, warmup=warmup,
                             range_name=step_range_name(stage.op, stage.stage, size, name)).median_ms

    if prepare:  # timed apart and shown beside the stage, never folded into it or hidden
        rec["prepare"], rec["prepare_ms"] = launcher.prepare_name, alone(launcher.prepare_name or "prepare", prepare)
    steps = launcher.steps  # work inside the stage's time (v11's transpose), timed alone too
    if steps:
        rec["steps_ms"] = {name: alone(name, step) for name, step in steps.items()}
    if stage.kind.vendor_library:  # what PyTorch's users get for the same product, beside it
        from nsprof.ladder_runs.torch_baseline import torch_timing

        call = get_op(stage.op).workload.library_call(stage, problem)
        rec.update(torch_timing(stage, problem, call, size, repeat=repeat, warmup=warmup))
        if launches is not None and rec["torch_ms"] is not None:
            from nsprof.ladder_runs.torch_baseline import torch_launch

            launches[(TORCH, stage.stage)] = torch_launch(call, stage.precision.name)
    if launches is not None:
        launches[stage.stage] = launcher.run
    seconds = rec["median_ms"] * 1e-3
    rec["tflops"] = get_op(stage.op).flops(size) / seconds / 1e12
    rec["tbytes_per_s"] = get_op(stage.op).min_bytes(size) / seconds / 1e12  # each matrix moved once
    return rec


def unavailable_reason(stage: Stage, tools) -> str | None:
    """Why the stage cannot run here: its kind's package is missing (Triton), or this GPU can run
    none of its launch configurations; None when it can run."""
    missing = stage.kind.unavailable()
    if missing:
        return missing
    if not stage.tiles or any(tools.runs(t) for t in stage.tiles):
        return None
    needs = sorted({t.arch for t in stage.tiles if t.arch})
    return f"needs {', '.join(needs)} (compute capability {tools.compute_capability} here)"


def run_bench(op: str, stages: list[Stage], sizes: list[Size], *, repeat: int | None = None,
              warmup: int | None = None, baseline: bool = True, tile: str | None = None,
              kept: dict[tuple[str, str, str], str] | None = None, progress: Progress | None = None,
              paired: bool = True, no_gpu: str | None = None, cold_inputs: bool = True,
              back_to_back: bool = False) -> list[dict]:
    """Every stage at every size, plus the baselines of their precisions (cuBLAS FP32, cuBLAS TF32)
    for % of cuBLAS, which `paired` measures with each stage's launches alternating with the fastest
    library's (pair_with_library; else from the medians timed apart). `kept` ((op, stage, size
    label) -> configuration, kept_configurations) pins
    Triton stages to the configurations an earlier run kept. `no_gpu`: why this machine has no
    usable GPU; its GPU stages are then recorded "skipped" with that reason, and the CPU stages run.
    `cold_inputs`: every GPU launch timed (tuning, stage, library, pairs) on the next of several sets of the
    problem's buffers (nsprof.launch.rotation), none left in L2 by a recent launch; each record says how many
    sets (`input_sets`; 1: every launch on the one set). `back_to_back` (with `paired`): each pair timed in chains
    too (pair_with_library)."""
    kept = kept or {}
    if no_gpu is not None:
        return _run_without_gpu(op, stages, sizes, no_gpu, repeat=repeat, warmup=warmup, progress=progress)
    on_gpu = [s for s in stages if not s.kind.on_host]  # CPU stages alone need no GPU
    cp, tools = _gpu() if on_gpu else (None, None)
    workload = get_op(op).workload
    todo = _with_baselines(op, stages, on_gpu) if baseline else list(stages)
    records: list[dict] = []
    broken: str | None = None  # set when a CUDA error leaves the context unusable
    for size in sizes:
        problems = _problems(workload, size, cp, gpu=bool(on_gpu), cpu=len(on_gpu) < len(stages))
        launches: dict = {}  # the launches of the stages that verified at this size, for pairing
        first = len(records)
        problem = None  # each stage's problem, let go with the size's (an empty ladder has none)
        with _input_sets(problems["gpu"], cold_inputs) as sets:
            for stage in todo:
                problem = problems["cpu" if stage.kind.on_host else "gpu"]
                if progress:
                    progress(f"{stage.op} {stage.stage} {size_label(size)}")
                rec, broken = _bench_one(stage, size, problem, tools, broken, repeat=repeat, warmup=warmup,
                                         tile=kept.get((stage.op, stage.stage, size_label(size)), tile),
                                         launches=launches if paired else None)
                rec["baseline_only"] = stage not in stages
                if not stage.kind.on_host:
                    rec["input_sets"] = sets
                records.append(rec)
            if launches and not broken:
                _pair_size(op, size, records[first:], launches, progress, back_to_back)
        del problems, problem, launches
        if cp is not None:
            cp.get_default_memory_pool().free_all_blocks()
    _add_pct_cublas(records)
    _add_speedups(records)
    return records


def _run_without_gpu(op: str, stages: list[Stage], sizes: list[Size], no_gpu: str, *, repeat: int | None,
                     warmup: int | None, progress: Progress | None) -> list[dict]:
    """run_bench where this machine has no usable GPU: the CPU stages run, the GPU ones are recorded skipped (`no_gpu`)."""
    skipped = [_skipped(stage, size, no_gpu) for size in sizes for stage in stages
               if not stage.kind.on_host]
    cpu = [stage for stage in stages if stage.kind.on_host]
    return (run_bench(op, cpu, sizes, repeat=repeat, warmup=warmup, progress=progress) if cpu else []) + skipped


@contextlib.contextmanager
def _input_sets(problem, cold: bool) -> Iterator[int]:
    """The sets of buffers the GPU launches at one size rotate among (nsprof.launch.rotation): 1 where
    `cold` is off or no GPU stage runs."""
    if problem is None or not cold:
        yield 1
        return
    from nsprof.launch.rotation import rotating_inputs

    with rotating_inputs(problem) as rotation:
        yield rotation.sets


def _problems(workload, size: Size, cp, *, gpu: bool, cpu: bool) -> dict:
    """The workload's problem at `size`: in GPU memory (`cp`, CuPy) for GPU stages, in host memory (NumPy) for CPU stages."""
    import numpy as np

    return {"gpu": workload.problem(cp, size) if gpu else None, "cpu": workload.problem(np, size) if cpu else None}


def _with_baselines(op: str, stages: list[Stage], on_gpu: list[Stage]) -> list[Stage]:
    """The stages to run at each size: the baselines of the GPU stages' precisions not among them first, then the stages."""
    baselines = list(dict.fromkeys(baseline_stage(op, s.precision.name) for s in on_gpu))
    return [b for b in baselines if b not in stages] + list(stages)


def _bench_one(stage: Stage, size: Size, problem, tools, broken: str | None, *, repeat: int | None,
               warmup: int | None, tile: str | None, launches: dict | None) -> tuple[dict, str | None]:
    """One stage at one size (on the host, or on the GPU unless an earlier CUDA error `broken` left it
    unusable), and `broken` after it: a CUDA error is recorded, then stops the GPU's use."""
    if stage.kind.on_host:
        from nsprof.ladder_runs.cpu_stage import bench_cpu_stage

        return bench_cpu_stage(stage, size, problem, _record(stage, size), repeat=repeat, warmup=warmup), broken
    if broken:
        return _failed(stage, size, "error", f"not run after an earlier CUDA error: {broken}"), broken
    try:
        return bench_stage(stage, size, problem, tools, repeat=repeat, warmup=warmup, tile=tile, launches=launches), None
    except KernelBuildError as err:
        return _failed(stage, size, "error", str(err)), None
    except NsprofError:
        raise
    except Exception as err:  # a CUDA error: record it, then stop using the GPU
        broken = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
        return _failed(stage, size, "error", broken), broken


def _pair_size(op: str, size: Size, records: list[dict], launches: dict, progress: Progress | None,
               back_to_back: bool) -> None:
    """pair_with_library on the records of one size, saying so."""
    if progress:
        progress(f"{op} {size_label(size)}: each stage against the library, launched in turn"
                 + (", then back to back" if back_to_back else ""))
    pair_with_library(records, launches, back_to_back)


def _gpu():
    from nsprof.launch.gpu import require_cupy
    from nsprof.launch.tools import launch_tools

    return require_cupy(), launch_tools()


def _add_speedups(records: list[dict]) -> None:
    """speedup_vs_cpu_loop, speedup_vs_cpu_blas of each timed stage, where the CPU's serial loop and
    BLAS were timed at the same size too (nsprof.ladder.cpu_speedups)."""
    from nsprof.ladder.cpu_speedups import cpu_speedups

    timed = [r for r in records if r["status"] == "ok"]
    for record, speedups in zip(timed, cpu_speedups(timed, "median_ms")):
        record.update({key: value for key, value in speedups.items() if value is not None})


def kept_configurations(path: Path) -> dict[tuple[str, str, str], str]:
    """(op, stage, size label) -> the configuration a bench record's Triton stages kept (their
    tuning's), so that another run (`nsprof profile`'s ncu pass after its nsys pass) measures the
    same kernels instead of tuning again under another tool's timing."""
    try:
        records = json.loads(path.read_text())["results"]
        return {(r["op"], r["stage"], r["size"]): r["details"]["autotune"]["kept"] for r in records
                if r.get("status") == "ok" and (r.get("details") or {}).get("autotune")}
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as err:
        raise UsageError(f"cannot read the kept configurations of {path} ({type(err).__name__}: {err})",
                         "pass a results file that nsprof bench wrote") from None


def pair_with_library(records: list[dict], launches: dict, back_to_back: bool = False) -> None:
    """% of cuBLAS with the launches in turn (nsprof.launch.measure.paired_medians), for the records
    of one size: each library stage against PyTorch's call for the same product decides which is
    faster, then every other GPU stage that verified runs in turn with that faster one.
    `pct_cublas` is the library's median over the stage's from those same pairs, `pct_cublas_of`
    names the library, `pct_cublas_method` is PAIRED. Stages not paired (CPU stages, a library
    without PyTorch) keep the medians timed apart (_add_pct_cublas). With `back_to_back`, each pair is
    timed again in chains (nsprof.launch.back_to_back.chained_medians): the stage's `back_to_back_ms` and
    `pct_cublas_back_to_back`, of the library the pairs chose."""
    from nsprof.launch.measure import paired_medians

    def chained(record: dict, own, other, of_faster: bool = False) -> None:
        """The record's back-to-back figures against `other`, or against the faster of the two (a library
        stage against PyTorch's call, as its pct_cublas)."""
        from nsprof.launch.back_to_back import chained_medians

        ours, theirs = chained_medians(own, other)
        record.update(back_to_back_ms=ours, pct_cublas_back_to_back=100 * (min(ours, theirs) if of_faster else theirs) / ours)

    fastest: dict[str, tuple[Callable[[], object], str]] = {}
    for r in records:
        own = launches.get(r["stage"]) if r["status"] == "ok" and get_stage(r["op"], r["stage"]).kind.vendor_library else None
        if own is None:
            continue
        library = get_op(r["op"]).library
        fastest[r["stage"]] = (own, library)
        if (torch := launches.get((TORCH, r["stage"]))) is not None:
            ours, theirs = paired_medians(own, torch)
            if theirs < ours:
                fastest[r["stage"]] = (torch, r["torch_call"])
            r.update(pct_cublas=100 * min(ours, theirs) / ours, pct_cublas_of=fastest[r["stage"]][1],
                     pct_cublas_method=PAIRED)
            if back_to_back:
                chained(r, own, torch, of_faster=True)
    for r in records:
        run, base = launches.get(r["stage"]), fastest.get(r["baseline"])
        if r["status"] != "ok" or run is None or base is None or r["stage"] in fastest:
            continue
        ours, theirs = paired_medians(run, base[0])
        r.update(pct_cublas=100 * theirs / ours, pct_cublas_of=base[1], pct_cublas_method=PAIRED)
        if back_to_back:
            chained(r, run, base[0])


def _add_pct_cublas(records: list[dict]) -> None:
    """pct_cublas where pair_with_library did not measure it: the time of the record's baseline (the
    library in the stage's own precision, named in `baseline`) at the same size over the stage's, in
    percent: of the faster of the baseline's own median and PyTorch's for the same product
    (`torch_ms`), which `pct_cublas_of` names (the op's library, "cuBLAS", or "torch.mm", "torch.mv");
    `pct_cublas_method` MEDIANS."""
    fastest: dict[tuple, tuple[float, str]] = {}
    for r in records:
        if r["status"] == "ok":
            torch_ms = r.get("torch_ms")
            own = (float(r["median_ms"]), get_op(r["op"]).library)
            fastest[(r["op"], r["stage"], r["size"])] = (float(torch_ms), r["torch_call"]) \
                if torch_ms is not None and torch_ms < own[0] else own
    for r in records:
        base = fastest.get((r["op"], r["baseline"], r["size"]))
        if r["status"] == "ok" and base is not None and r.get("pct_cublas_method") != PAIRED:
            r["pct_cublas"], r["pct_cublas_of"], r["pct_cublas_method"] = 100 * base[0] / r["median_ms"], base[1], MEDIANS


def add_pct_dram(records: list[dict], ceiling) -> None:
    """pct_dram: each timed record's bandwidth (min_bytes over its time) as a percentage of the DRAM
    ceiling (a nsprof Ceiling, measured or the datasheet's); nothing when none is known."""
    if ceiling is None or ceiling.dram_tbyte_per_s is None:
        return
    for r in records:
        if r.get("tbytes_per_s") is not None:
            r["pct_dram"] = 100 * r["tbytes_per_s"] / ceiling.dram_tbyte_per_s


def check_tile(stages: list[Stage], tile: str | None) -> None:
    """A forced tile must be one that some selected stage offers (checked before any GPU work)."""
    if tile is None:
        return
    offered = sorted({t.shape for s in stages if len(s.tiles) > 1 for t in s.tiles})
    if tile not in offered:
        raise UsageError(f"no selected stage offers a {tile} tile",
                         f"choose one of {', '.join(offered)} (stages with several tiles: "
                         f"{', '.join(s.stage for s in stages_for(stages[0].op) if len(s.tiles) > 1)})"
                         if offered else "select a stage with several tiles (see `nsprof stages --json`)")


def check_output(out_dir: Path, path: Path | None, force: bool = False):
    """Fail before the GPU work, not after it, when the results could not be written (a file in
    the way of `path` that nsprof did not write, see nsprof.output). Returns what save_results checks again."""
    from nsprof.output import check_outputs

    target_dir = path.parent if path is not None else out_dir
    if target_dir.exists() and not target_dir.is_dir():
        raise UsageError(f"{target_dir} is a file, not a directory", "pass a directory for the results")
    if path is not None and path.is_dir():
        raise UsageError(f"{path} is a directory", "give --save-as a file name")
    return check_outputs([path], force) if path is not None else None


def results_document(records: list[dict], env: dict, cold_inputs: bool = True) -> dict:
    """What `nsprof bench --json` prints and the results file holds: a BenchDocument
    (nsprof.ladder_runs.bench_types, whose JSON Schema is docs/json/bench.schema.json)."""
    from nsprof.launch import timing_method

    # how the GPU stages' launches were timed, and on which inputs (a bench with none names neither): files before
    # 2026-11-30 name neither
    timing = {"timing": timing_method(), "inputs": "cold" if cold_inputs else "warm"} if "device" in env else {}
    return {
        "nsprof_version": __version__,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(["nsprof", *sys.argv[1:]]),
        "env": env,
        **timing,
        "results": records,
    }


def save_results(doc: dict, out_dir: Path, path: Path | None = None, force: bool = False, since=None) -> Path:
    """Write `path` (replacing it only where nsprof wrote it, or with `force`; `since` from
    check_output), or out_dir/bench-<op>-<timestamp>.json without replacing an existing file."""
    from nsprof.output import write_outputs

    if path is not None:
        write_outputs({path: (json.dumps(doc, indent=2) + "\n").encode()}, force, since)
        return path
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    op = doc["results"][0]["op"] if doc["results"] else "none"
    path = out_dir / f"bench-{op}-{stamp}.json"
    n = 1
    while path.exists():
        n += 1
        path = out_dir / f"bench-{op}-{stamp}-{n}.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path
