"""nsprof's public API: what the commands do, callable the same way from a notebook or a script.

    from nsprof import api
    records = api.bench(["v6", "v9"], ["4096"])                 # needs a GPU
    analysis = api.analyze("profiles/examples/h200-sgemm-1024")   # any machine
    ladder = api.load_ladder(["profiles/examples/h200-sgemm-1024"])
    api.write_roofline(ladder, "reports")
    api.write_report(ladder, "reports/h200")
    api.write_timeline("profiles/examples/h200-pipeline-1024", trace="reports/pipeline.json")
    flows = api.pipeline("sgemm", ["v9"], "1024")                   # needs a GPU (and nsys for the breakdown)

Every function raises nsprof.errors exceptions (with a fix hint) for bad input.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from nsprof.errors import ParseError, UsageError
from nsprof.paths import PROFILES_DIR, REPORTS_DIR

if TYPE_CHECKING:  # the libraries load with the calls that need them: `nsprof --help` stays fast
    from nsprof.analyze import ProfileAnalysis
    from nsprof.analyze.ladder import LadderAnalysis
    from nsprof.capture.program import GuidedChoice

CAPTURED_FLOWS = 10  # flows per variant (and as many untimed ones before) in the pipeline's nsys capture
PNG_DPI = 150  # figures are laid out in points; this only sets the PNG's pixel size
CHART_FORMATS = ("png", "svg", "pdf")  # what a timeline is drawn as, by --out's suffix (matplotlib writes each)
ROOFLINE_FILES = ("roofline.png", "roofline.svg", "roofline.csv")
# roofline.csv: what each point is, where it sits, what bounds it, then where it came from.
ROOFLINE_CSV_COLUMNS = ("label", "kernel", "level", "intensity_flop_per_byte", "flops_source", "gflops_per_s", "bound", "pct_of_roof",
                        "roof_gflops_per_s", "roof_source", "compute_roof", "duration_ns", "time_source", "op", "stage",
                        "size", "profile")


def bench(stages: list[str] | None = None, sizes: list[str] | None = None, op: str = "sgemm", **options) -> list[dict]:
    """Verify, then time, each stage at each size (GPU); one record per stage and size.

    `options` are nsprof.launch.bench.run_bench's: repeat, warmup, baseline, tile, progress."""
    from nsprof.launch.bench import check_tile, run_bench
    from nsprof.registry import get_op, select_stages
    from nsprof.sizes import parse_sizes

    chosen = select_stages(op, stages)
    check_tile(chosen, options.get("tile"))
    return run_bench(op, chosen, parse_sizes(sizes, get_op(op).dims), **options)


def analyze(path: str | Path, ceilings: str | Path | None = None, attribution: str = "thread") -> ProfileAnalysis:
    """A profile directory or one nsys or ncu file: ranges, kernels and stages, with % of peak
    against the GPU's ceilings (measured where saved, see nsprof.parse.sources.resolve_ceiling).
    `attribution` ("thread" or "process") says whose CUDA calls an NVTX range counts
    (nsprof.analyze.nvtx_attribution)."""
    from nsprof.profile_analysis import analyzed_profile

    return analyzed_profile(Path(path), _path(ceilings), attribution)[1]


def analyze_many(directory: str | Path, scheduler: str | None = None, workers: int | None = None,
                 memory_limit: str | None = None, step_range: str | None = None, progress: bool = False):
    """A directory of several nsys captures (one per rank or run), each analyzed as a Dask task on a
    local cluster of `workers` processes with `memory_limit` each, or on the cluster at `scheduler`
    (an address or a scheduler file). Returns nsprof.many.ManyCaptures: captures, kernels (merged),
    step_range and stragglers."""
    from nsprof.many import WORKER_MEMORY, analyze_many as run

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
         min_change_pct: float = 2.0, attribution: str = "thread"):
    """`nsprof diff`: two captures (profile directories, nsys or ncu files, or two `nsprof bench`
    records), or with `stages` (X, Y) stage X of A against stage Y of B (B defaults to A).
    Returns nsprof.analyze.diff.DiffResult: kernels, ranges, stages, totals and warnings."""
    from nsprof.analyze.diff import Capture, diff_captures, profile_capture
    from nsprof.parse import load_profile
    from nsprof.parse.bench_record import is_bench_record, load_bench_record

    if b is None and stages is None:
        raise UsageError("diff needs two captures, or one with --stages X,Y", "nsprof diff A B, or nsprof diff A --stages v5,v6")
    paths = [Path(a), Path(b if b is not None else a)]
    captures = []
    for path in paths:
        if is_bench_record(path):
            captures.append(Capture(str(path), bench=load_bench_record(path)))
        else:
            captures.append(profile_capture(str(path), load_profile(path), attribution))
    return diff_captures(*captures, min_change_pct=min_change_pct, stage_pair=stages, attribution=attribution)


def load_ladder(paths: list[str | Path] | None = None, keep_all: bool = False,
                ceilings: str | Path | None = None) -> LadderAnalysis:
    """The profiles under `paths` (default profiles/) analyzed under the GPU's ceilings; by default
    each stage and size from the latest profile that has it, every profile's with `keep_all`."""
    from nsprof.analyze.ladder import analyze_ladder, sources_gpu
    from nsprof.parse.sources import load_sources, resolve_ceiling

    sources = load_sources([Path(p) for p in paths] if paths else [PROFILES_DIR])
    gpu = sources_gpu(sources)
    manifests = [source.profile.manifest for source in sources]  # oldest first: the newest's ceilings win
    return analyze_ladder(sources, gpu, resolve_ceiling(gpu, _path(ceilings), manifests), keep_all)


def write_roofline(ladder: LadderAnalysis, out: str | Path, force: bool = False) -> list[Path]:
    """OUT/roofline.png, .svg and .csv, written as a set (see nsprof.output): files nsprof wrote
    there before are replaced, any other file in the way is kept (a UsageError names it) unless
    `force`. Raises ParseError when no kernel has FLOPs, bytes and time."""
    if ladder.points.empty:
        names = ", ".join(source.name for source in ladder.sources) or "the profiles given"
        raise ParseError(f"nothing to place on a roofline in {names} (no ncu kernel with FLOP counts, bytes and a duration)",
                         "Profile with `nsprof profile --tool ncu` (or both), or pass an ncu CSV that has "
                         "gpu__time_duration.sum, dram__bytes_read.sum/_write.sum and the FP32 or tensor FLOP counters")
    import io

    import matplotlib.pyplot as plt  # matplotlib loads only for the calls that draw

    from nsprof.output import check_outputs, write_set
    from nsprof.render.csv_table import csv_bytes
    from nsprof.render.roofline import roofline_figure

    _outside_profiles(out)
    since = check_outputs([Path(out) / name for name in ROOFLINE_FILES], force)
    figure = roofline_figure(ladder.points, ladder.roofs, ladder.gpu)
    png, svg = io.BytesIO(), io.BytesIO()
    figure.savefig(png, format="png", dpi=PNG_DPI)
    figure.savefig(svg, format="svg")
    plt.close(figure)
    table = csv_bytes(ladder.points[list(ROOFLINE_CSV_COLUMNS)])
    return write_set(Path(out), dict(zip(ROOFLINE_FILES, (png.getvalue(), svg.getvalue(), table))), force, since)


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
    import io

    import matplotlib.pyplot as plt  # noqa: F401  (the backend loads with the first figure)

    from nsprof.output import check_outputs, write_set
    from nsprof.render.diff_chart import diff_chart
    from nsprof.render.diff_tables import CHART_FILE, diff_blocks, diff_title
    from nsprof.render.document_writers import to_html, to_markdown

    _outside_profiles(directory)
    since = check_outputs([Path(directory) / name for name in ("index.html", "diff.md", CHART_FILE)], force)
    rows, label = (result.kernels, "kernel") if result.kernels else (result.stages, "stage")
    png = io.BytesIO()
    diff_chart(rows, label, diff_title(result)).savefig(png, format="png", dpi=PNG_DPI)
    blocks = diff_blocks(result, 100, png.getvalue())
    files = {"index.html": to_html(blocks, diff_title(result)).encode(),
             "diff.md": to_markdown(blocks).encode(), CHART_FILE: png.getvalue()}
    return write_set(Path(directory), files, force, since)


def unplaced_lines(ladder: LadderAnalysis) -> list[str]:
    """One line per piece of work the roofline could not place, and why."""
    from nsprof.analyze.roofline import unplaced_work

    return [f"not on the roofline: {row.label}" + (f" ({row.size})" if isinstance(row.size, str) else "") + f": {row.reason}"
            for row in unplaced_work(ladder.work).itertuples()]


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
             capture: bool = True, out: str | Path = PROFILES_DIR, nsys: str | None = None,
             progress=lambda message: None) -> dict:
    """The whole flow of a matrix product, host to host, in every variant (nsprof.launch.pipeline),
    against the bus floor, with the breakdown of an nsys capture of the same flows (GPU).

    Default stages: the fastest stage that verifies at this size, and the library's (cuBLAS) in its precision.
    Returns {"records", "floor", "gpu", "profile" (the capture's directory or None), "breakdown"
    (where it came from, or why there is none)}."""
    from nsprof.analyze.pipeline import against_floor, bus_floor
    from nsprof.launch.bench import run_bench
    from nsprof.launch.gpu import device_info
    from nsprof.launch.pipeline import cold_record, measure_pipeline
    from nsprof.launch.tools import launch_tools
    from nsprof.parse.sources import resolve_ceiling
    from nsprof.registry import baseline_stage, baseline_stages, get_op, is_baseline_stage, select_stages
    from nsprof.sizes import parse_sizes

    spec = get_op(op)
    if spec.dims != "MxNxK":
        raise UsageError(f"{op} is not a matrix product: the pipeline multiplies two matrices",
                         "choose --op sgemm or --op hgemm")
    [parsed] = parse_sizes([size], spec.dims)
    env = device_info()
    tools = launch_tools()
    if stages:
        chosen = select_stages(op, stages)
    else:
        progress("finding the fastest stage that verifies")
        own = [s for s in select_stages(op, None) if not is_baseline_stage(op, s.stage)]
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
    result = {"records": records, "floor": floor, "gpu": env["device"], "device": env, "profile": None,
              "breakdown": "not captured (--no-nsys)"}
    if capture:
        result.update(_pipeline_breakdown(op, chosen, parsed, chunks, records, Path(out), nsys, progress))
    return result


def _pipeline_breakdown(op, stages, size, chunks, records, out: Path, nsys, progress) -> dict:
    """Run the same flows under nsys (graphs traced node by node) into a profile directory, and
    join each variant's median breakdown to its record."""
    import sys

    from nsprof.analyze.gpu_events import gpu_events
    from nsprof.analyze.pipeline import flow_breakdown
    from nsprof.capture.program import ProgramRequest
    from nsprof.capture.session import capture_program
    from nsprof.capture.tools import find_tool
    from nsprof.errors import ToolNotFoundError
    from nsprof.ranges import PIPELINE_PREFIX, pipeline_range
    from nsprof.parse.nsys_sqlite import load_nsys
    from nsprof.sizes import short_size

    try:
        find_tool("nsys", nsys)
    except ToolNotFoundError:
        return {"breakdown": "no breakdown: nsys was not found (install Nsight Systems, or pass --nsys PATH)"}
    argv = [sys.executable, "-m", "nsprof", "pipeline", "--op", op, "--stage", ",".join(s.stage for s in stages),
            "--size", short_size(size), "--chunks", str(chunks), "--repeat", str(CAPTURED_FLOWS), "--warmup", str(CAPTURED_FLOWS),
            "--no-nsys", "--no-cold", "--json"]
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
    up COVERAGE_PCT of kernel time, at most `top`; nsprof.analyze.hot_kernels.hot_rows), and how
    many launches of each configuration to pass over so that ncu sees a steady-state one."""
    from nsprof.analyze.harness import harness_kernels
    from nsprof.analyze.hot_kernels import COVERAGE_PCT, hot_rows, nsys_kernel_rows
    from nsprof.capture.program import STEADY_SKIP, GuidedChoice
    from nsprof.parse.nsys_sqlite import load_nsys

    exports = [load_nsys(Path(nsys_export))]
    hot = hot_rows(nsys_kernel_rows(exports, harness_kernels(exports)), top)
    hot = hot[hot["mangled_name"].notna()]  # graphs traced at graph level, and exports without the symbols
    kernels = tuple({"kernel": row.kernel, "mangled_name": row.mangled_name, "grid": row.grid, "block": row.block,
                     "launches": int(row.launches), "total_ns": int(row.total_ns), "pct": round(float(row.pct), 2)}
                    for row in hot.itertuples())
    skip = max(0, min([STEADY_SKIP, *(k["launches"] - 1 for k in kernels)]))
    rule = (f"the fewest kernels (name and launch configuration) that make {COVERAGE_PCT:.0f}% of kernel time, "
            f"at most {top}; each configuration of them profiled once, after its first {skip} launches")
    return GuidedChoice(kernels, round(float(hot["pct"].sum()), 2), skip, rule)


def write_timeline(path: str | Path, out: str | Path | None = None, range_: str | None = None, window: str | None = None,
                   trace: str | Path | None = None, force: bool = False) -> tuple[str, list[str]]:
    """The Gantt chart of an nsys capture (PNG at `out`, default reports/timeline-<name>.png, with
    the range or window in the name when one is asked for) and its events as a Chrome trace at
    `trace`. The chart shows where the GPU work and NVTX ranges are (nsprof.analyze.timeline_window),
    an NVTX range `range_`, a START:END `window` in ms, or "all". Files nsprof wrote there before
    are replaced, any other file in the way is kept unless `force` (see nsprof.output); each is
    written whole or not at all. Returns the window drawn and why, and what it wrote."""
    import io
    import json

    import matplotlib.pyplot as plt
    import pandas as pd

    from nsprof.analyze.gpu_events import gpu_events, range_window
    from nsprof.analyze.timeline_window import capture_span, default_window
    from nsprof.output import check_outputs, write_outputs
    from nsprof.parse import load_profile
    from nsprof.parse.sources import unique_names
    from nsprof.render.chrome_trace import chrome_trace
    from nsprof.render.timeline import WHOLE, default_reason, timeline_figure, window_caption

    path = Path(path)
    profile = load_profile(path)
    if not profile.nsys:
        raise ParseError(f"{path}: no Nsight Systems capture to draw (a timeline needs nsys output)",
                         "Capture one with `nsprof profile --tool nsys`, or pass an .nsys-rep or .sqlite file")
    name = unique_names([path])[0]
    out = Path(out) if out else Path(REPORTS_DIR)
    if out.is_dir() or not out.suffix:  # a directory: the chart goes inside it under its default name
        out = out / timeline_file_name(name, range_, window)
    chart_format = out.suffix.lower().lstrip(".")
    if chart_format not in CHART_FORMATS:
        raise UsageError(f"--out {out}: nsprof draws a timeline as {', '.join('.' + f for f in CHART_FORMATS)}, "
                         f"not .{chart_format}", "name the file with one of those suffixes, or give a directory")
    targets = [out] + ([Path(trace)] if trace else [])
    for target in targets:
        _outside_profiles(target.parent)
    since = check_outputs(targets, force)
    events = gpu_events(profile.nsys)
    ranges = pd.concat([export.nvtx for export in profile.nsys], ignore_index=True)
    capture = capture_span(events, ranges)
    (start, end), why = capture, WHOLE
    if range_:
        found = range_window(profile.nsys, events, range_)
        if found is None:
            known = ", ".join(sorted(set(ranges["range"]))[:8]) or "none"
            raise UsageError(f"no NVTX range named {range_!r} in {path}", f"the capture's ranges: {known}")
        (start, end), why = found, f"NVTX range {range_!r} and the GPU work launched inside it"
    if window and window.strip().lower() != "all":
        (start, end), why = _window(window, capture, start, end), "as --window asked"
        _nothing_in_window(window, events, ranges, start, end, capture)
    elif window is None and not range_:
        chosen = default_window(events, ranges)
        (start, end), why = (chosen.start_ns, chosen.end_ns), default_reason(chosen.left_out, chosen.idle_ns)
    caption = window_caption((start, end), capture, why)
    files, wrote = {}, []  # everything is drawn before anything is written
    if trace:
        gpus = {int(row.device_id): row.name for export in profile.nsys for row in export.gpus.itertuples() if row.name}
        zoomed = bool(range_) or (window is not None and window.strip().lower() != "all")  # the trace keeps to it
        traced_events, traced_ranges = (_within(events, start, end), _within(ranges, start, end)) if zoomed else (events, ranges)
        document = chrome_trace(traced_events, traced_ranges, gpus, origin=capture[0])
        files[Path(trace)] = json.dumps(document).encode()
        wrote.append(f"wrote {trace} ({sum(e['ph'] == 'X' for e in document['traceEvents']):,} events"
                     + (", those in the window drawn)" if zoomed else ")"))
    shown = int(((events["end_ns"] > start) & (events["start_ns"] < end)).sum())
    figure = timeline_figure(events, ranges, (start, end), capture[0], f"{name}: {shown:,} GPU operations", caption)
    buffer = io.BytesIO()
    figure.savefig(buffer, format=chart_format, dpi=PNG_DPI)
    plt.close(figure)
    files[out] = buffer.getvalue()
    write_outputs(files, force, since)
    return caption, wrote + [f"wrote {out}"]


def _within(frame, start: int, end: int):
    """The rows of events or NVTX ranges that overlap [start, end) (a range never closed runs on)."""
    ends = frame["end_ns"].astype("Float64").fillna(float("inf"))
    return frame[(ends > start) & (frame["start_ns"] < end)]


def timeline_file_name(name: str, range_: str | None, window: str | None) -> str:
    """timeline-<name>.png, with the range or the window asked for (timeline-<name>-<range>.png,
    timeline-<name>-120-135ms.png), so that charts of one capture do not replace each other."""
    import re

    parts = [name]
    if range_:
        parts.append(range_)
    if window:
        parts.append("all" if window.strip().lower() == "all" else window.strip().replace(":", "-") + "ms")
    return "timeline-" + "-".join(re.sub(r"[^A-Za-z0-9._]+", "-", part).strip("-.") for part in parts) + ".png"


def _window(text: str, capture: tuple[int, int], start: int, end: int) -> tuple[int, int]:
    """START:END in ms from the capture's start; an empty side keeps the current bound."""
    first, last = capture
    left, colon, right = text.partition(":")
    try:
        bounds = [None if not side.strip() else first + round(float(side) * 1e6) for side in (left, right)]
    except ValueError:
        bounds = None
    if not colon or bounds is None:
        raise UsageError(f"--window {text!r} is not START:END in milliseconds", "write it as 120:135, 120:, :135 or all")
    new_start = bounds[0] if bounds[0] is not None else start
    new_end = bounds[1] if bounds[1] is not None else end
    if new_end <= first or new_start >= last:  # before "ends before it starts": 5000: past the end is outside
        raise UsageError(f"--window {text!r} is outside the capture, which runs 0 to {(last - first) / 1e6:,.3f} ms",
                         "give a window inside it, or --window all")
    if new_end <= new_start:
        raise UsageError(f"--window {text!r} ends before it starts", "give START below END")
    return new_start, new_end


def _nothing_in_window(window: str, events, ranges, start: int, end: int, capture: tuple[int, int]) -> None:
    """Refuse a --window that holds no GPU work and no NVTX range: the chart would be empty."""
    def overlapping(frame) -> bool:
        return bool(((frame["end_ns"].fillna(capture[1]) > start) & (frame["start_ns"] < end)).any())

    if overlapping(events) or overlapping(ranges):
        return
    work = f"{(events['start_ns'].min() - capture[0]) / 1e6:,.3f} to {(events['end_ns'].max() - capture[0]) / 1e6:,.3f} ms" \
        if len(events) else "nowhere"
    raise UsageError(f"--window {window!r} holds no GPU work and no NVTX range (the capture runs 0 to "
                     f"{(capture[1] - capture[0]) / 1e6:,.3f} ms, its GPU work {work})", "give a window over them, or --window all")
