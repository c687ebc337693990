"""nsprof's public API: what the commands do, callable the same way from a notebook or a script.

    from nsprof import api
    run = api.bench(["v6", "v9"], ["4096"])                     # needs a GPU: run.records
    analysis = api.analyze("profiles/examples/h200-sgemm-1024")   # any machine
    ladder = api.load_ladder(["profiles/examples/h200-sgemm-1024"])
    api.write_roofline(ladder, "reports")
    api.write_report(ladder, "reports/h200")
    api.write_timeline("profiles/examples/h200-pipeline-1024", trace="reports/pipeline.json")
    flows = api.pipeline("sgemm", ["v9"], "1024")                   # needs a GPU (and nsys for the breakdown)

Every command of the CLI is a thin wrapper over one of these. What they return, by kind:
- what reads or computes returns one result object that render/ turns into tables and JSON:
  analyze (ProfileAnalysis), analyze_many (ManyCaptures), diff (DiffResult), load_ladder
  (LadderAnalysis), load_timeline (nsprof.timeline.Timeline), explain (Explanation), stages (Op),
  choose_hot_kernels (GuidedChoice);
- what runs on the GPU returns its JSON document, as --json prints it: bench (BenchRun, whose
  `document` it is, with `written`), pipeline (dict), measure_ceilings (dict, and the files
  written), doctor (a list of check records), profile (the profile directory and its manifest);
- what writes files returns the list[Path] it wrote, in order: write_roofline, write_report,
  write_diff, write_captures_report, write_timeline.
Every function raises nsprof.errors exceptions (with a fix hint) for bad input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from nsprof.errors import ParseError, UsageError
from nsprof.paths import PROFILES_DIR, REPORTS_DIR

if TYPE_CHECKING:  # the libraries load with the calls that need them: `nsprof --help` stays fast
    import pandas as pd

    from nsprof.analyze import ProfileAnalysis
    from nsprof.analyze.diff import Capture, DiffResult
    from nsprof.analyze.diff.noise import NoiseFloor
    from nsprof.analyze.ladder import LadderAnalysis
    from nsprof.capture.program import GuidedChoice, ProgramRequest
    from nsprof.capture.request import ProfileRequest
    from nsprof.ceilings.peaks import Ceiling
    from nsprof.explain.page import Explanation
    from nsprof.many import ManyCaptures
    from nsprof.op_model import Op
    from nsprof.timeline import Timeline

CAPTURED_FLOWS = 10  # flows per variant (and as many untimed ones before) in the pipeline's nsys capture
ROOFLINE_FILES = ("roofline.png", "roofline.svg", "roofline.csv")
# roofline.csv: what each point is, where it sits, what bounds it, then where it came from.
ROOFLINE_CSV_COLUMNS = ("label", "kernel", "level", "intensity_flop_per_byte", "flops_source", "gflops_per_s",
                        "bound", "pct_of_roof", "roof_gflops_per_s", "roof_source", "compute_roof", "duration_ns",
                        "time_source", "op", "stage", "size", "profile")


@dataclass
class BenchRun:
    """What `bench` measured: the results document (what --json prints and the saved file holds:
    env, results), the DRAM ceiling that records' pct_dram is of (ops whose headline is bytes),
    and the files written."""

    document: dict
    dram_ceiling: Ceiling | None
    written: list[Path]

    @property
    def records(self) -> list[dict]:
        """One record per stage and size (nsprof.launch.bench), baselines included."""
        return self.document["results"]

    @property
    def failed(self) -> bool:
        return any(r["status"] in ("failed", "error") for r in self.records)


def bench(stages: list[str] | None = None, sizes: list[str] | None = None, op: str = "sgemm", *,
          repeat: int | None = None, warmup: int | None = None, baseline: bool = True, tile: str | None = None,
          out: str | Path | None = None, save_as: str | Path | None = None, force: bool = False,
          tuned: str | Path | None = None, progress: Callable[[str], None] | None = None, runs: int = 1,
          paired: bool = True) -> BenchRun:
    """Verify, then time, each stage at each size (GPU), with the baselines of their precisions
    (`baseline`) for % of the library, measured with the launches in turn where `paired`
    (nsprof.launch.bench.pair_with_library); `tile` forces a block tile; `tuned`, a bench record whose
    kept Triton configurations are reused instead of tuning again; `runs` > 1 repeats it all in
    fresh processes (nsprof.launch.bench_runs). The results are saved to
    OUT/bench-<op>-<time>.json with `out`, or to `save_as` (replaced only where nsprof wrote it,
    or with `force`); a file in the way is found before any GPU work."""
    from nsprof.ceilings.resolve import resolve_ceiling
    from nsprof.launch.bench import (
        add_pct_dram,
        check_output,
        check_tile,
        kept_configurations,
        results_document,
        run_bench,
        save_results,
    )
    from nsprof.registry import get_op, select_stages
    from nsprof.sizes import parse_sizes, size_label

    _check_runs(runs)
    chosen = select_stages(op, stages)
    parsed = parse_sizes(sizes, get_op(op).dims)
    check_tile(chosen, tile)
    save = out is not None or save_as is not None
    directory = Path(out) if out is not None else PROFILES_DIR
    since = check_output(directory, _path(save_as), force) if save else None
    kept = kept_configurations(Path(tuned)) if tuned is not None else {}
    env, no_gpu = _bench_env(chosen, runs)  # fails early, in one line, where only GPU stages were chosen
    if runs > 1:
        from nsprof.launch.bench_runs import merged, run_in_fresh_processes

        argv = workload_argv("bench", {"stages": [s.stage for s in chosen], "sizes": [size_label(s) for s in parsed],
                                       "op": op, "repeat": repeat, "warmup": warmup, "baseline": baseline, "tile": tile,
                                       "tuned": None if tuned is None else str(tuned), "paired": paired})
        document = merged(run_in_fresh_processes(argv, runs, progress or (lambda message: None)))
        records = document["results"]
    else:
        records = run_bench(op, chosen, parsed, repeat=repeat, warmup=warmup, baseline=baseline, tile=tile, kept=kept,
                            progress=progress, paired=paired, no_gpu=no_gpu)
        document = results_document(records, env)
    # CPU stages alone name no GPU, so no GPU's ceilings
    ceiling = resolve_ceiling(env["device"]) if get_op(op).headline == "bytes" and "device" in env else None
    add_pct_dram(records, ceiling)
    written = [save_results(document, directory, _path(save_as), force, since)] if save else []
    return BenchRun(document, ceiling, written)


def _bench_env(chosen: list, runs: int = 1) -> tuple[dict, str | None]:
    """The machine a bench record names: the GPU (device_info) where a GPU stage was chosen, and
    the host's CPU (cpu_stage.host_info) where a CPU stage was; and why the GPU stages cannot run
    where CPU stages were chosen beside them and there is no usable GPU (None where they can).
    GpuUnavailableError where only GPU stages were chosen, or runs in fresh processes were asked."""
    from nsprof.errors import GpuUnavailableError
    from nsprof.stage_kinds import CPU

    env: dict = {}
    no_gpu = None
    if any(stage.kind is not CPU for stage in chosen):
        from nsprof.launch.gpu import device_info

        try:
            env.update(device_info())
        except GpuUnavailableError as err:
            if runs > 1 or all(stage.kind is not CPU for stage in chosen):
                raise
            no_gpu = err.problem
    if any(stage.kind is CPU for stage in chosen):
        from nsprof.launch.cpu_stage import host_info

        env.update(host_info())
    return env, no_gpu


def stages(op: str = "sgemm") -> Op:
    """The ladder `op` as the registry declares it: its stages, precisions, baselines, formulas."""
    from nsprof.registry import get_op

    return get_op(op)


def doctor(nsys: str | None = None, ncu: str | None = None) -> list[dict]:
    """What profiling needs, checked (CuPy, GPU, driver, nvtx, nsys, ncu, counter access): one
    record per check (check, status, detail, fix), as `nsprof doctor --json` prints them."""
    from nsprof.capture.checks import environment_checks

    return environment_checks(nsys, ncu)


def measure_ceilings(out: str | Path | None = None, save: bool = True,
                     progress: Callable[[str], None] | None = None) -> tuple[dict, list[Path]]:
    """This GPU's roofs, measured (GPU): the document `nsprof ceilings --json` prints, and the file
    it was saved to in nsprof's data directory (or `out`) when `save`."""
    from nsprof.ceilings.files import save_ceilings
    from nsprof.ceilings.measure import measure_ceilings as measure
    from nsprof.launch.gpu import device_info

    device_info()  # without CuPy or a GPU: the one-line error, before any progress
    document = measure(progress=progress or (lambda message: None))
    return document, [save_ceilings(document, _path(out))] if save else []


def measure_cpu_ceilings(out: str | Path | None = None, save: bool = True,
                         progress: Callable[[str], None] | None = None) -> tuple[dict, list[Path]]:
    """This host CPU's roofs, measured (no GPU): the document `nsprof ceilings --cpu --json` prints
    (nsprof.ceilings.cpu), and the file it was saved to (as a GPU's are) when `save`."""
    from nsprof.ceilings.cpu import measure_cpu_ceilings as measure
    from nsprof.ceilings.files import save_ceilings

    document = measure(progress=progress or (lambda message: None))
    return document, [save_ceilings(document, _path(out))] if save else []


def explain(topic: str | None = None, stage: str | None = None, source: str | Path | None = None, *,
            op: str | None = None, ceilings: str | Path | None = None, shape: str | None = None,
            access: str | None = None, width: int | None = None, store: bool = False, list_topics: bool = False) -> Explanation:
    """`nsprof explain`: a topic with the ladder's declared accesses and measurements (from `source`,
    by default the latest profile), or with `shape`/`access`/`width`/`store` the same models on an
    access you describe, or with `list_topics` the list of topics. Returns
    nsprof.explain.explanation.Explanation (its `document` is the JSON, `page()` the blocks)."""
    from nsprof.explain.topics import TOPICS

    own_access = any(value is not None for value in (shape, access, width)) or store
    if list_topics and topic is not None:
        raise UsageError(f"--list lists every topic; it takes no topic ('{topic}')", "drop one of them")
    if list_topics:
        from nsprof.explain.topics import topic_list

        return topic_list()
    if topic is None:
        raise UsageError("no topic given", f"choose one of: {', '.join(TOPICS)} (or pass --list)")
    if own_access:
        from nsprof.access import parse_shape
        from nsprof.explain.explanation import explain_access

        if stage is not None:
            raise UsageError("--stage and --shape/--access both describe accesses", "give one or the other")
        return explain_access(topic, parse_shape(shape) if shape else None, access or "row",
                              4 if width is None else width, "store" if store else "load")
    from nsprof.explain.explanation import explain_topic

    return explain_topic(topic, stage, _path(source), op=op, ceilings=_path(ceilings))


def profile_request(program: list[str] | None = None, stages: list[str] | None = None, sizes: list[str] | None = None,
                    op: str | None = None, *, tool: str = "both", metrics: list[str] | None = None,
                    clock_control: str = "none", repeat: int | None = None, ranges: list[str] | None = None,
                    kernel: str | None = None, launch_count: int | None = None, top: int | None = None,
                    runs: int = 1) -> ProfileRequest | ProgramRequest:
    """What `profile` should capture, checked: the ladder's stages at sizes (ProfileRequest), or
    the user's `program` (argv; ProgramRequest), with `runs` nsys runs. Options of the other kind
    are a UsageError."""
    from dataclasses import replace

    request = _capture_request(program, stages, sizes, op, tool, metrics, clock_control, repeat, ranges, kernel,
                               launch_count, top)
    _check_runs(runs)
    if runs > 1 and "nsys" not in request.tools:
        raise UsageError("--runs repeats the nsys run, and --tool ncu takes none", "pass --tool nsys or --tool both")
    return replace(request, runs=runs)


def _check_runs(runs: int) -> None:
    """`--runs` of profile and bench: 1 to MAX_RUNS fresh processes."""
    from nsprof.capture.commands import MAX_RUNS

    if not 1 <= runs <= MAX_RUNS:
        raise UsageError(f"--runs {runs}: need 1 to {MAX_RUNS} runs", "pass --runs 5, say, to measure the variation "
                                                                     "between runs")


def _capture_request(program, stages, sizes, op, tool, metrics, clock_control, repeat, ranges, kernel, launch_count, top):
    if program:  # your own program: the ladder's options do not apply
        from nsprof.capture.program import build_program_request

        ladder_only = [flag for flag, value in (("--stage", stages), ("--size", sizes), ("--op", op), ("--repeat", repeat))
                       if value]
        if ladder_only:
            raise UsageError(f"{', '.join(ladder_only)} {'is' if len(ladder_only) == 1 else 'are'} for the ladder's stages, "
                             "not for a program", "drop them, or drop the program after --")
        return build_program_request(program, tool, metrics, clock_control, ranges, kernel, launch_count, top)
    if ranges or kernel or launch_count is not None or top is not None:
        raise UsageError("--range, --kernel, --launch-count and --top select launches of your own program",
                         "give the program after --: nsprof profile --range step -- python train.py")
    from nsprof.capture.request import build_request

    return build_request(op or "sgemm", stages, sizes, tool, metrics, clock_control, repeat)


def profile_commands(request, out: str | Path = PROFILES_DIR, nsys: str | None = None, ncu: str | None = None) -> list[str]:
    """The command lines `profile` would run for `request` (from profile_request), one shell line
    each; runs nothing and needs no GPU."""
    from nsprof.capture.session import dry_run

    return [command.shell for command in dry_run(request, Path(out), {"nsys": nsys, "ncu": ncu})]


def profile(request, out: str | Path = PROFILES_DIR, nsys: str | None = None, ncu: str | None = None, *,
            force: bool = False, progress: Callable[[str], None] | None = None) -> tuple[Path, dict]:
    """Capture `request` (from profile_request) under nsys and/or ncu into a new profile directory
    under `out`; returns the directory and its manifest. A guided program capture hands ncu the hot
    kernels nsys found (choose_hot_kernels). A program that ran under nsys but died under ncu is
    returned too, not raised: its status says "partial: ..." and its "partial" entry how it died, the
    last kernel ncu reported and what to try (nsprof.capture.partial); `nsprof profile` exits 3."""
    from nsprof.capture.program import ProgramRequest
    from nsprof.capture.session import capture, capture_program

    tools = {"nsys": nsys, "ncu": ncu}
    if isinstance(request, ProgramRequest):
        return capture_program(request, Path(out), tools, force=force, progress=progress, chooser=choose_hot_kernels)
    return capture(request, Path(out), tools, force=force, progress=progress)


def check_verified(directory: Path, manifest: dict) -> None:
    """Raise VerificationFailed for the first stage of a capture that failed its verification."""
    from nsprof.capture.session import VerificationFailed

    failed = [v for v in manifest["verification"] if v["status"] == "failed"]
    if failed:
        first = failed[0]
        raise VerificationFailed(
            f"{first['stage']} {first['size']} failed verification ({first['message']})",
            f"its launches were not measured, so {directory} has no ranges for it; "
            f"check it with nsprof bench --stage {first['stage']}",
        )


def analyze(path: str | Path, ceilings: str | Path | None = None, attribution: str = "thread") -> ProfileAnalysis:
    """A profile directory or one nsys or ncu file: ranges, kernels and stages, with % of peak
    against the GPU's ceilings (measured where saved, see nsprof.ceilings.resolve.resolve_ceiling).
    `attribution` ("thread" or "process") says whose CUDA calls an NVTX range counts
    (nsprof.analyze.nvtx_attribution)."""
    from nsprof.profile_analysis import analyzed_profile

    return analyzed_profile(Path(path), _path(ceilings), attribution)[1]


def analyze_many(directory: str | Path, scheduler: str | None = None, workers: int | None = None,
                 memory_limit: str | None = None, step_range: str | None = None, progress: bool = False) -> ManyCaptures:
    """A directory of several nsys captures (one per rank or run), each analyzed as a Dask task on a
    local cluster of `workers` processes with `memory_limit` each, or on the cluster at `scheduler`
    (an address or a scheduler file). Returns nsprof.many.ManyCaptures: captures, kernels (merged),
    step_range and stragglers."""
    from nsprof.many import WORKER_MEMORY
    from nsprof.many import analyze_many as run

    return run(Path(directory), scheduler, workers, memory_limit or WORKER_MEMORY, step_range, progress)


def is_many_captures(path: str | Path) -> bool:
    """Whether `path` is a directory of several nsys captures (and no profile manifest)."""
    from nsprof.many import is_many

    return is_many(Path(path))


def write_captures_report(result, directory: str | Path, force: bool = False) -> list[Path]:
    """DIRECTORY/index.html, report.md and the per-rank chart of analyze_many's result, written as
    a set (nsprof.output.write_set): an earlier report there is kept unless `force`."""
    from nsprof.output import write_set
    from nsprof.render.captures import CHART_FILE, captures_blocks, rank_chart
    from nsprof.render.document import Heading
    from nsprof.render.document_writers import to_html, to_markdown

    _outside_profiles(directory)
    chart = rank_chart(result)
    title = f"{len(result.captures)} captures"
    blocks = [Heading(1, title), *captures_blocks(result, 100, chart)]
    files = {"index.html": to_html(blocks, title).encode(), "report.md": to_markdown(blocks).encode(), CHART_FILE: chart}
    return write_set(Path(directory), files, force)


def diff(a: str | Path, b: str | Path | None = None, stages: tuple[str, str] | None = None,
         min_change_pct: float = 2.0, attribution: str = "thread", noise: str | Path | None = None) -> DiffResult:
    """`nsprof diff`: two sides, each a capture (a profile directory, an nsys or ncu file, an
    `nsprof bench` record) or several runs of one program (a profile taken with --runs, a directory
    of nsys captures, a `bench --runs` record); or with `stages` (X, Y) stage X of A against stage
    Y of B (B defaults to A). `noise`: the floors of a one-run diff, a noise record or runs of an
    unchanged program (default: nsprof's own). Returns nsprof.analyze.diff.DiffResult."""
    from nsprof.analyze.diff import diff_captures

    if b is None and stages is None:
        raise UsageError("diff needs two captures, or one with --stages X,Y", "nsprof diff A B, or nsprof diff A --stages v5,v6")
    sides = [diff_side(Path(a), attribution), diff_side(Path(b if b is not None else a), attribution)]
    floors = noise_floor(Path(noise), attribution, _side_gpu(sides[0])) if noise is not None else None
    return diff_captures(sides[0], sides[1], min_change_pct=min_change_pct, stage_pair=stages, attribution=attribution,
                         noise=floors)


def diff_side(path: Path, attribution: str = "thread") -> Capture:
    """One side of a diff (nsprof.analyze.diff.Capture): a bench record, a capture with its
    further runs, or a directory of nsys captures (no manifest) as the runs of one program."""
    from nsprof.analyze.diff import Capture
    from nsprof.many import is_many
    from nsprof.parse.bench_record import is_bench_record, load_bench_record
    from nsprof.parse.profile import further_runs, tool_outputs
    from nsprof.profile_analysis import diff_analysis

    def analyzed(name: str, file: Path) -> Capture:  # the parts of its analysis a diff compares, nothing else
        return Capture(name, diff_analysis(file, attribution))

    if is_bench_record(path):
        return Capture(str(path), bench=load_bench_record(path))
    if is_many(path):
        first, *rest = tool_outputs(path)[0]
        return _with_runs(analyzed(str(path), first), tuple(analyzed(str(file), file) for file in rest))
    return _with_runs(analyzed(str(path), path), tuple(analyzed(str(file), file) for file in further_runs(path)))


def _with_runs(capture: Capture, runs: tuple[Capture, ...]) -> Capture:
    """`capture` with its further runs (itself where there are none)."""
    from dataclasses import replace

    return replace(capture, runs=runs) if runs else capture


UNNAMED_GPU = "an unnamed GPU"  # a noise record's GPU where the captures name none


def _side_gpu(side) -> str | None:
    """The GPU a diff side ran on: its capture's, or its bench record's."""
    if side.bench is not None:
        env = side.bench.get("env")
        return env.get("gpu") if isinstance(env, dict) else None
    return side.analyzed().gpu


def measure_noise_record(paths: Sequence[str | Path], out: str | Path, attribution: str = "thread",
                         force: bool = False, db: str | Path | None = None) -> dict:
    """`nsprof noise`: the noise floors of one unchanged program from its runs, written as a noise
    record at `out` (what `diff --noise` reads) and, with `db`, kept in that history database as its
    GPU's record. Each path is a profile with runs, a directory of captures, or one capture; together
    they are the program's runs, all on one GPU. Returns the record, with `written` (the files)."""
    import json

    from nsprof.analyze.diff import run_frames
    from nsprof.analyze.diff.noise import measure_noise, noise_document
    from nsprof.history.summary import now
    from nsprof.output import check_outputs, write_outputs

    target = Path(out)
    if target.suffix.lower() != ".json":
        raise UsageError(f"--out {target}: a noise record is JSON", "name the file with .json, e.g. --out noise.json")
    _outside_profiles(target.parent)
    if db is not None:
        _outside_profiles(history_path(db).parent)
    since = check_outputs([target], force)
    sides = [diff_side(Path(path), attribution) for path in paths]
    runs = [run for side in sides for run in (side, *side.runs)]
    if any(run.bench is not None for run in runs):
        raise UsageError("nsprof noise reads captures, not bench records (their runs are in the record)",
                         "pass profiles taken with --runs, or directories of nsys captures")
    gpus = sorted({run.analyzed().gpu or UNNAMED_GPU for run in runs})
    if len(gpus) > 1:
        raise UsageError(f"the runs come from {len(gpus)} GPUs ({', '.join(gpus)}): a noise floor is one GPU's",
                         "measure each GPU's floors from its own runs")
    names = ", ".join(str(path) for path in paths)
    if len(runs) < 2:  # before any run is read for its frames
        raise UsageError(f"{names}: one run of the program, and a noise floor needs two or more",
                         "capture the unchanged program with `nsprof profile --runs 5`, or pass several captures of it")
    frames = [frame for side in sides for frame in run_frames(side, attribution)]
    floor = measure_noise(frames, f"measured by nsprof noise on {len(frames)} runs of {names}")
    record = noise_document(floor, len(frames), gpus[0], now())
    written = write_outputs({target: (json.dumps(record, indent=2) + "\n").encode()}, force, since)
    if db is not None:
        from nsprof.history.store import opened, store_noise

        with opened(history_path(db), create=True) as conn:
            store_noise(conn, record)
        written.append(history_path(db))
    return {**record, "written": [str(path) for path in written]}


def noise_floor(path: Path, attribution: str = "thread", gpu: str | None = None) -> NoiseFloor:
    """The noise floors in `path`: a noise record (.json), a history database's record for `gpu`
    (nsprof noise --db), or measured from the runs of an unchanged program (a profile with runs, a
    directory of captures)."""
    from nsprof.analyze.diff import run_frames
    from nsprof.analyze.diff.noise import measure_noise, noise_from_document, noise_record
    from nsprof.history.store import is_history, noise_records, opened

    if path.suffix.lower() == ".json":
        return noise_record(path)
    if is_history(path):
        with opened(path) as conn:
            records = noise_records(conn)
        name = gpu or UNNAMED_GPU
        if name not in records:
            held = f" (it holds {', '.join(records)})" if records else ""
            raise UsageError(f"{path}: no noise record for {name}{held}",
                             f"record one from unchanged runs on it: nsprof noise RUNS... --out noise.json --db {path}")
        return noise_from_document(records[name], f"{path}, {name}'s noise record")
    return measure_noise(run_frames(diff_side(path, attribution), attribution), f"measured on {path}")


def load_ladder(paths: Sequence[str | Path] | None = None, keep_all: bool = False,
                ceilings: str | Path | None = None) -> LadderAnalysis:
    """The profiles under `paths` analyzed under the GPU's ceilings; by default each stage and size
    from the latest profile that has it, every profile's with `keep_all`. Without `paths`, one ladder
    on one GPU under profiles/ (nsprof.parse.sources.default_ladder), and `chosen` says which."""
    from nsprof.analyze.ladder import analyze_ladder, sources_gpu
    from nsprof.analyze.report import analyze_profile
    from nsprof.ceilings.resolve import resolve_ceiling
    from nsprof.parse.sources import default_ladder, load_sources, loaded

    chosen = None
    if paths:
        sources = load_sources([Path(p) for p in paths])
    else:
        found, chosen = default_ladder(PROFILES_DIR)
        sources = loaded(found)
    gpu = sources_gpu(sources)
    manifests = [source.profile.manifest for source in sources]  # oldest first: the newest's ceilings win
    ceiling = resolve_ceiling(gpu, _path(ceilings), manifests)
    analyses = {source.name: analyze_profile(source.profile.nsys, source.profile.ncu, source.profile.manifest, ceiling,
                                             cpu=source.profile.cpu)
                for source in sources}
    return replace(analyze_ladder(sources, analyses, gpu, ceiling, keep_all), chosen=chosen)


def write_roofline(ladder: LadderAnalysis, out: str | Path, force: bool = False) -> list[Path]:
    """OUT/roofline.png, .svg and .csv, written as a set (see nsprof.output): files nsprof wrote
    there before are replaced, any other file in the way is kept (a UsageError names it) unless
    `force`. Raises ParseError when no kernel has FLOPs, bytes and time."""
    if ladder.points.empty:
        names = ", ".join(source.name for source in ladder.sources) or "the profiles given"
        raise ParseError(f"nothing to place on a roofline in {names} (no ncu kernel with FLOP counts, bytes and a duration)",
                         "Profile with `nsprof profile --tool ncu` (or both), or pass an ncu CSV that has "
                         "gpu__time_duration.sum, dram__bytes_read.sum/_write.sum and the FP32 or tensor FLOP counters")

    from nsprof.output import check_outputs, write_set
    from nsprof.render.csv_table import csv_bytes
    from nsprof.render.figure_file import figure_files
    from nsprof.render.roofline import roofline_figure

    _outside_profiles(out)
    since = check_outputs([Path(out) / name for name in ROOFLINE_FILES], force)
    drawn = figure_files(roofline_figure(ladder.points, ladder.roofs, ladder.gpu, cpu_roofs=ladder.cpu_roofs),
                         ("png", "svg"))  # drawn once
    table = csv_bytes(ladder.points[list(ROOFLINE_CSV_COLUMNS)])
    return write_set(Path(out), dict(zip(ROOFLINE_FILES, (*drawn, table))), force, since)


def write_report(ladder: LadderAnalysis, directory: str | Path, force: bool = False) -> list[Path]:
    """DIRECTORY/index.html (self-contained), report.md and the PNG files report.md shows, written
    as a set (see nsprof.output): an earlier report nsprof wrote there is replaced, any other file
    in the way is kept unless `force`."""
    from nsprof.render.document_writers import Image, to_html, to_markdown  # matplotlib loads only for the calls that draw
    from nsprof.render.report import report_document

    if ladder.work.empty and not ladder.timelines:
        raise ParseError("nothing to report: no stage, kernel or CUDA activity in the profiles given",
                         "Capture one with `nsprof profile`, or pass a profile directory or an ncu .csv file with --from")
    from nsprof.analyze.untimed import untimed_ladder
    from nsprof.output import check_outputs, write_set

    untimed = untimed_ladder(ladder.work, ladder.sources)
    if untimed:
        raise ParseError(f"no stage has a time to report: {untimed}",
                         "Capture the stages with `nsprof profile` (nsys times them), or pass ncu output that has "
                         "gpu__time_duration.sum")
    _outside_profiles(directory)
    since = check_outputs([Path(directory) / "index.html", Path(directory) / "report.md"], force)
    title, blocks = report_document(ladder)
    files = {"index.html": to_html(blocks, title).encode(), "report.md": to_markdown(blocks).encode(),
             **{block.file_name: block.png for block in blocks if isinstance(block, Image)}}
    return write_set(Path(directory), files, force, since)


def write_diff(result, directory: str | Path, force: bool = False) -> list[Path]:
    """DIRECTORY/index.html (self-contained), diff.md and the chart diff.md shows, written as a set
    (see nsprof.output): an earlier diff nsprof wrote there is replaced, any other file in the way
    is kept unless `force`."""
    from nsprof.output import check_outputs, write_set
    from nsprof.render.diff_chart import diff_chart
    from nsprof.render.diff_tables import CHART_FILE, diff_blocks, diff_title
    from nsprof.render.document import REPORT_WIDTH
    from nsprof.render.document_writers import to_html, to_markdown
    from nsprof.render.figure_file import figure_bytes

    _outside_profiles(directory)
    since = check_outputs([Path(directory) / name for name in ("index.html", "diff.md", CHART_FILE)], force)
    rows, label = (result.kernels, "kernel") if result.kernels else (result.stages, "stage")
    png = figure_bytes(diff_chart(rows, label, diff_title(result)))
    blocks = diff_blocks(result, REPORT_WIDTH, png)
    files = {"index.html": to_html(blocks, diff_title(result)).encode(),
             "diff.md": to_markdown(blocks).encode(), CHART_FILE: png}
    return write_set(Path(directory), files, force, since)


def unplaced_lines(ladder: LadderAnalysis) -> list[str]:
    """One line per piece of work the roofline could not place, or placed at fewer levels, and why."""
    from nsprof.analyze.roofline import unplaced_work, unseen_levels

    def where(row) -> str:
        return row.label + (f" ({row.size})" if isinstance(row.size, str) else "")

    return [*(f"not on the roofline: {where(row)}: {row.reason}"
              for row in unplaced_work(ladder.work, ladder.cpu_roofs).itertuples()),
            *(f"no {row.level} point: {where(row)}: {row.reason}" for row in unseen_levels(ladder.work).itertuples())]


def _outside_profiles(target: str | Path) -> None:
    """Refuse to write into a profile (a capture is evidence: it keeps only what the tools wrote)."""
    from nsprof.parse.profile import enclosing_profile

    profile = enclosing_profile(Path(target))
    if profile is not None:
        raise UsageError(f"{target} is inside the profile {profile}: nsprof writes nothing into a profile",
                         f"choose another output directory (the default is {REPORTS_DIR}/)")


def _path(value: str | Path | None) -> Path | None:
    return None if value is None else Path(value)


def pipeline(op: str = "sgemm", stages: list[str] | None = None, size: str = "1024", *, chunks: int = 4,
             repeat: int | None = None, warmup: int | None = None, cold: bool = True,
             capture: bool = True, out: str | Path = PROFILES_DIR, nsys: str | None = None, cpu: bool = True,
             progress=lambda message: None) -> dict:
    """The whole flow of a matrix product, host to host, in every variant (nsprof.launch.pipeline),
    against the bus floor, with the breakdown of an nsys capture of the same flows (GPU).

    Default stages: the fastest stage that verifies at this size, and the library's (cuBLAS) in its precision.
    With `cpu`, the op's CPU BLAS stage (v0blas) times the same product in host memory, and each
    flow's `x_cpu_blas` says how many times faster the whole flow was, copies included.
    Returns its JSON document, {"records", "floor", "gpu", "profile" (the capture's directory or None),
    "breakdown" (where it came from, or why there is none), "cpu" (the CPU BLAS's record, or None)},
    which the capture's directory keeps as pipeline.json."""
    from nsprof.analyze.pipeline import against_floor, bus_floor
    from nsprof.ceilings.resolve import resolve_ceiling
    from nsprof.launch.bench import run_bench
    from nsprof.launch.gpu import device_info
    from nsprof.launch.pipeline import cold_record, measure_pipeline
    from nsprof.launch.tools import launch_tools
    from nsprof.registry import baseline_stage, baseline_stages, get_op, is_baseline_stage, select_stages
    from nsprof.sizes import parse_sizes
    from nsprof.stage_kinds import CPU

    spec = get_op(op)
    if spec.dims != "MxNxK":
        raise UsageError(f"{op} is not a matrix product: the pipeline multiplies two matrices",
                         "choose --op sgemm or --op hgemm")
    [parsed] = parse_sizes([size], spec.dims)
    named = select_stages(op, stages) if stages else []
    if on_cpu := [s.stage for s in named if s.kind is CPU]:
        raise UsageError(f"{', '.join(on_cpu)}: a CPU stage has no GPU flow (no copies, no device)",
                         "choose GPU stages; `nsprof bench` times the CPU stages")
    env = device_info()
    tools = launch_tools()
    if named:
        chosen = named
    else:
        progress("finding the fastest stage that verifies")
        own = [s for s in select_stages(op, None) if not is_baseline_stage(op, s.stage) and s.kind is not CPU]
        timed = [r for r in run_bench(op, own, [parsed], repeat=10, warmup=None, baseline=False) if r["status"] == "ok"]
        fastest = min(timed, key=lambda r: r["median_ms"])["stage"] if timed else None
        chosen = select_stages(op, [fastest]) if fastest else []
        chosen.append(baseline_stage(op, chosen[0].precision.name) if chosen else baseline_stages(op)[0])
    records = []
    for stage in chosen:
        records += measure_pipeline(stage, parsed, tools, chunks=chunks, repeat=repeat, warmup=warmup, progress=progress)
        if cold:
            progress(f"{stage.stage} cold, in a fresh process")
            records.append(cold_record(stage, parsed))
    ceiling = resolve_ceiling(env["device"])
    def floor_of(bytes_in: int, bytes_out: int) -> dict:
        return bus_floor(bytes_in, bytes_out, ceiling)
    records = against_floor(records, floor_of)
    floor = floor_of(records[0]["bytes_in"], records[0]["bytes_out"]) if records else None
    versus = _cpu_blas(op, parsed, progress) if cpu else None
    if versus and versus["median_ms"]:
        for record in records:  # seed 000's question: is the GPU faster than the CPU, copies included?
            flow_ms = record.get("median_ms") or record.get("wall_ms")
            record["x_cpu_blas"] = versus["median_ms"] / flow_ms if flow_ms else None
    result = {"records": records, "floor": floor, "gpu": env["device"], "device": env, "profile": None,
              "breakdown": "not captured (--no-nsys)", "cpu": versus}
    if capture:
        import json

        from nsprof.output import write_atomically

        result.update(_pipeline_breakdown(op, chosen, parsed, chunks, records, Path(out), nsys, progress))
        if result["profile"]:  # None when nsys was not found
            write_atomically(Path(result["profile"]) / "pipeline.json", json.dumps(result, indent=2, default=str).encode())
    return result


WORKLOADS = ("bench", "pipeline")  # what nsprof.workload runs in a process of its own


def workload_argv(job: str, options: dict) -> list[str]:
    """The command line that runs `job` of nsprof.workload with `options`, the keyword arguments of
    this module's function of that name, in a fresh process (data, not a command line of the CLI)."""
    import json
    import sys

    if job not in WORKLOADS:
        raise ValueError(f"no such workload: {job}")
    return [sys.executable, "-m", "nsprof.workload", job, json.dumps(options, sort_keys=True)]


def _cpu_blas(op: str, size, progress) -> dict | None:
    """The op's CPU BLAS stage (v0blas) on the same product, timed on this host ({"stage",
    "median_ms", "cpu", "message"}); None where the op has no CPU stage."""
    from nsprof.cpu_roles import CPU_BLAS, cpu_role
    from nsprof.launch.bench import run_bench
    from nsprof.launch.cpu_stage import host_info
    from nsprof.registry import stages_for
    from nsprof.stage_kinds import CPU

    blas = next((s for s in stages_for(op) if s.kind is CPU and cpu_role(s) == CPU_BLAS), None)
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
    from nsprof.capture.program import ProgramRequest
    from nsprof.capture.session import capture_program
    from nsprof.capture.tools import find_tool
    from nsprof.errors import ToolNotFoundError
    from nsprof.parse.nsys_sqlite import load_nsys
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
                             nsys_options=("--cuda-graph-trace=node",))
    progress("capturing the flows under nsys")
    directory, _ = capture_program(request, out, {"nsys": nsys}, progress=progress)
    export = load_nsys(directory / "nsys.sqlite")
    breakdown = flow_breakdown(export, gpu_events([export]), PIPELINE_PREFIX + "/").set_index("range")
    for record in records:
        name = pipeline_range(op, record["stage"], record["variant"], size)
        if name in breakdown.index:
            record.update({key: float(value) for key, value in breakdown.loc[name].items() if key != "flows"})
    return {"profile": str(directory),
            "breakdown": f"nsys capture of the same flows in {directory} (median of {CAPTURED_FLOWS} flows each)"}


def choose_hot_kernels(nsys_export: str | Path, top: int) -> GuidedChoice:
    """What a guided capture hands to ncu: the hot kernels of an nsys export (the fewest that make
    up COVERAGE_PCT of the kernel time that is not harness work, at most `top`;
    nsprof.analyze.hot_kernels.hot_rows), of its steady state where the program has one
    (nsprof.analyze.program_harness.steady_state), and how many launches of each configuration to
    pass over so that ncu profiles a steady-state one."""
    from nsprof.analyze.harness import harness_kernels
    from nsprof.analyze.hot_kernels import COVERAGE_PCT, hot_rows, nsys_kernel_rows
    from nsprof.analyze.program_harness import steady_part
    from nsprof.capture.program import STEADY_SKIP, GuidedChoice
    from nsprof.parse.nsys_sqlite import load_nsys

    exports = [load_nsys(Path(nsys_export))]
    steady, state = steady_part(exports)
    harness = harness_kernels(exports, state)
    ranked = nsys_kernel_rows(steady, harness)
    hot = hot_rows(ranked, top)
    hot = hot[hot["mangled_name"].notna()]  # graphs traced at graph level, and exports without the symbols
    # launches of each chosen configuration before the steady state: ncu passes over as many
    whole = nsys_kernel_rows(exports, harness).set_index(["kernel", "grid", "block"])["launches"]
    before = [int(whole.get((row.kernel, row.grid, row.block), row.launches)) - int(row.launches) for row in hot.itertuples()]
    kernels = tuple({"kernel": row.kernel, "mangled_name": row.mangled_name, "grid": row.grid, "block": row.block,
                     "launches": int(row.launches), "launches_before_steady_state": early,
                     "total_ns": int(row.total_ns), "pct": round(float(row.pct), 2)}
                    for row, early in zip(hot.itertuples(), before))
    skip = max(0, min([max([STEADY_SKIP, *before]), *(k["launches"] + k["launches_before_steady_state"] - 1
                                                       for k in kernels)]))
    work = ranked.loc[~ranked["harness"], "total_ns"].sum()
    covered = round(float(100 * hot["total_ns"].sum() / work), 2) if work else 0.0
    rule = (f"the fewest kernels (name and launch configuration) that make {COVERAGE_PCT:.0f}% of the kernel time "
            f"that is not harness work (nsprof.analyze.harness), at most {top}"
            + (f", in the steady state ({state.to_json()['rule']})" if state else "")
            + f"; each configuration of them profiled once, after its first {skip} launches")
    return GuidedChoice(kernels, covered, skip, rule)


def load_timeline(path: str | Path, range_: str | None = None, window: str | None = None) -> Timeline:
    """What a timeline of an nsys capture draws (nsprof.timeline.Timeline): its GPU events and NVTX
    ranges, and the window: where the GPU work and NVTX ranges are (nsprof.analyze.timeline_window),
    an NVTX range `range_`, a START:END `window` in ms, or "all"; with the caption that says why."""
    from nsprof.timeline import load_timeline as load

    return load(Path(path), range_, window)


def write_timeline(timeline: Timeline | str | Path, out: str | Path | None = None, range_: str | None = None,
                   window: str | None = None, trace: str | Path | None = None, force: bool = False) -> list[Path]:
    """The Gantt chart of a timeline (from load_timeline, or of the capture at a path, with
    `range_` and `window` as load_timeline's) as PNG, SVG or PDF at `out` (default
    reports/timeline-<name>.png, with the range or window in the name), and with `trace` its events
    as a Chrome trace. Files nsprof wrote there before are replaced, any other file in the way is
    kept unless `force` (see nsprof.output); each is written whole or not at all. Returns the
    files written, the trace first."""
    from nsprof.output import check_outputs, write_outputs
    from nsprof.timeline import Timeline, chart_path, timeline_files

    view = timeline if isinstance(timeline, Timeline) else load_timeline(timeline, range_, window)
    chart = chart_path(view, out)
    if trace and Path(trace).resolve() == chart.resolve():
        raise UsageError(f"--out and --trace are the same file, {chart}: the chart would replace the events",
                         "give the trace a name of its own, such as events.json")
    targets = [chart] + ([Path(trace)] if trace else [])
    for target in targets:
        _outside_profiles(target.parent)
    since = check_outputs(targets, force)
    files = timeline_files(view, chart, _path(trace))  # everything is drawn before anything is written
    write_outputs(files, force, since)
    return list(files)


def history_path(db: str | Path | None = None) -> Path:
    """The history database: `db`, else history.sqlite in nsprof's data directory."""
    from nsprof.history.store import HISTORY_FILE
    from nsprof.paths import data_dir

    return Path(db) if db is not None else data_dir() / HISTORY_FILE


def history_add(paths: Sequence[str | Path], db: str | Path | None = None, commit: str | None = None,
                branch: str | None = None, attribution: str = "thread") -> list[dict]:
    """Add each bench record or capture to the history (nsprof.history.summary), all or none:
    every one is read before the first is added. Returns {"entry", "source", "measurements"} each."""
    from nsprof.history.store import add_entry, opened
    from nsprof.history.summary import git_fields, now, summarize

    summaries = []
    for path in map(Path, paths):
        entry, found = summarize(path, diff_side, attribution)
        if not found:
            raise UsageError(f"{path}: nothing measured to add (no timed stage, kernel or range)",
                             "add a bench record (nsprof bench --save-as) or an nsys capture")
        summaries.append((path, entry, found))
    fields = {**git_fields(commit, branch), "added": now()}
    with opened(history_path(db), create=True) as conn:
        return [{"entry": add_entry(conn, {**entry, **fields}, found), "source": str(path), "measurements": len(found)}
                for path, entry, found in summaries]


def history(db: str | Path | None = None) -> pd.DataFrame:
    """Every measurement of the history with its entry's fields, oldest first (nsprof.history.store)."""
    from nsprof.history.store import measurements, opened

    with opened(history_path(db)) as conn:
        return measurements(conn)


def write_history_chart(kind: str, name: str, series: pd.DataFrame, out: str | Path, force: bool = False) -> list[Path]:
    """OUT/history-<name>.png: one series' trend (nsprof.render.history.trend_png)."""
    import re

    from nsprof.output import check_outputs, write_set
    from nsprof.render.history import trend_png

    target = Path(out) / f"history-{re.sub(r'[^A-Za-z0-9._-]+', '-', name).strip('-')[:80] or kind}.png"
    since = check_outputs([target], force)
    return write_set(target.parent, {target.name: trend_png(kind, name, series)}, force, since)
