"""The report of a ladder analysis: what every stage measured, how fast it ran against cuBLAS, what
each stage's change moved, what bounds each stage now, and where an nsys capture's time went.

`report_document` returns the report as blocks (nsprof.render.document) with its figures as
PNG bytes; the caller writes report.md, index.html and the images.
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import pandas as pd
from matplotlib.figure import Figure

from nsprof import metric_catalog
from nsprof.analyze.metrics import half_flops_rule
from nsprof.analyze.pipeline import FlowTimeline
from nsprof.analyze.roofline import COMPULSORY, CPU_MEMORY_ROOF, LEVELS, binding_points, chart_groups, unplaced_work
from nsprof.analyze.timeline import TimeBreakdown
from nsprof.ladder.cpu_speedups import BLAS_KEY, LOOP_KEY
from nsprof.ladder.registry import Stage, all_ops, all_stages, baseline_stages, get_op, headline
from nsprof.ladder_analysis.profiles import LadderAnalysis
from nsprof.ladder_analysis.work import WALL_CLOCK, stage_changes
from nsprof.render import format as fmt
from nsprof.render.document import REPORT_WIDTH, Block, Bullets, Heading, Image, Paragraph, Table
from nsprof.render.figure_file import figure_bytes
from nsprof.render.host_tables import host_blocks
from nsprof.render.hot_kernels_table import hot_kernels_table
from nsprof.render.ladder import ladder_chart
from nsprof.render.roofline import roof_rate, roofline_figure
from nsprof.render.stage_notes import stage_notes

LEVEL_NAMES = {**{level.key: level.name for level in LEVELS}, COMPULSORY: "compulsory"}  # a CPU stage's: FLOP per compulsory byte
# How the report names and formats each column that stage_changes compares: catalogued metrics
# as the catalogue labels them, formatted for their unit; the derived columns here.
CHANGE_COLUMNS = {
    "time_per_launch_ns": ("time per launch", fmt.duration_ns),
    **{column: (metric.label, fmt.for_unit(metric.unit)) for column, metric in metric_catalog.BY_COLUMN.items()},
    "dram_bytes": ("DRAM bytes read + written", fmt.byte_count),
    "flops": ("FP32 FLOPs (fadd + fmul + 2 ffma)", fmt.count),
    "fp16_flops": (f"FP16 FLOPs on CUDA cores ({half_flops_rule()})", fmt.count),
    "tensor_flops": ("tensor-core FLOPs", fmt.count),
    "smem_ld_nway": ("shared-load n-way (wavefronts per instruction)", fmt.ratio),
    "smem_st_nway": ("shared-store n-way (wavefronts per instruction)", fmt.ratio),
}
NOT_COLLECTED = "not collected"
STALLS_HINT = "stall latencies come with `nsprof profile --metrics default,stalls`"


def report_document(ladder: LadderAnalysis) -> tuple[str, list[Block]]:
    """The report's title and blocks."""
    title = report_title(ladder)
    stages = ladder.work[ladder.work["stage"].notna()]
    kernels = ladder.work[ladder.work["stage"].isna()]
    blocks: list[Block] = [Heading(1, title), *_sources(ladder)]
    if len(stages):
        blocks += [Heading(2, "Stages"), _stage_table(stages), Paragraph(_conventions(stages))]
        blocks += [_image(chart.figure, chart.file_name, chart.alt) for chart in ladder_charts(ladder)]
    if len(kernels):
        blocks += [Heading(2, "Kernels"), _kernel_table(kernels)]
    for name, (hot, harness) in ladder.hot_kernels.items():
        if len(hot):
            blocks += [Heading(2, f"Where the time goes and what to fix first: {name}"),
                       hot_kernels_table(hot, REPORT_WIDTH, harness, rest_in="`nsprof analyze --json`")]
    for capture in ladder.captures:  # a program's capture: why its GPU waits, its loop, what to fix first
        if capture.analysis.host is not None:
            blocks += [Heading(2, f"Why the GPU waits: {capture.name}"),
                       *host_blocks(capture.analysis.host, capture.analysis.hot_kernels, REPORT_WIDTH,
                                    capture.analysis.loop, capture.analysis.phases)]
    if len(ladder.points):
        blocks += _roofline(ladder)
    if len(stages):
        blocks += _stage_sections(ladder, stages)
    for capture in ladder.captures:
        if capture.analysis.pipeline:
            blocks += _pipeline_section(capture.name, capture.analysis.pipeline, ladder.flows.get(capture.name))
    for name, breakdown in ladder.timelines.items():
        blocks += _time_sections(name, breakdown)
    return title, blocks


PIPELINE_HEADERS = ("stage", "variant", "median", "x floor", "H2D", "kernel", "D2H", "overlap", "idle")


def _pipeline_section(name: str, results: dict, flow: FlowTimeline | None) -> list[Block]:
    """What `nsprof pipeline` measured (`results`, its pipeline.json) in the profile `name`, and the
    timeline of its fastest variant's flows (`flow`, where the capture holds them)."""
    from nsprof.render.timeline import timeline_figure

    warm = [r for r in results["records"] if r["variant"] != "cold"]
    def ms(record: dict, key: str) -> str:
        return fmt.duration_ns(None if record.get(key) is None else record[key] * 1e6)

    versus = results.get("cpu") or {}  # seed 000's question: the whole flow against the CPU's BLAS, copies included
    against_cpu = any(r.get("x_cpu_blas") is not None for r in warm)
    rows = tuple((r["stage"], r["variant"], ms(r, "median_ms"), fmt.ratio(r.get("x_floor")),
                  *(ms(r, key) for key in ("h2d_ms", "kernel_ms", "d2h_ms", "overlap_ms", "idle_ms")),
                  *((fmt.speedup(r["x_cpu_blas"]) if r.get("x_cpu_blas") else fmt.MISSING,) if against_cpu else ()))
                 for r in warm)
    floor = results.get("floor") or {}
    said = (f"Floor: {floor['floor_ms']:.3f} ms with both directions overlapped, {floor['sequential_floor_ms']:.3f} ms one "
            f"after the other ({floor['source']}). " if floor.get("floor_ms") else "No floor: the bus was not measured. ")
    if against_cpu:
        said += (f"x CPU BLAS: how many times faster the whole flow, copies included, was than the CPU's BLAS "
                 f"({versus.get('stage')}) on the same product in host memory: {fmt.duration_ns(versus['median_ms'] * 1e6)} "
                 f"on {versus.get('cpu') or 'the host'}. " if versus.get("median_ms") else "")
    headers = (*PIPELINE_HEADERS, *(("x CPU BLAS",) if against_cpu else ()))
    blocks: list[Block] = [Heading(2, f"The whole flow ({name})"),
                           Table.preformatted(headers, rows, (False, False, *([True] * (len(headers) - 2)))),
                           Paragraph(said + "Median: CUDA events around the whole flow; the rest: "
                                     + str(results.get("breakdown")))]
    if flow is not None:
        best = flow.best
        figure = timeline_figure(flow.events, flow.ranges, flow.window, flow.origin,
                                 f"{best['stage']} {best['variant']}, the fastest variant: its flows as nsys saw them")
        blocks.append(_image(figure, f"pipeline-{name}.png", f"{best['stage']} {best['variant']} on the timeline"))
    return blocks


def report_title(ladder: LadderAnalysis) -> str:
    ops = sorted(set(ladder.work["op"].dropna()))
    subject = " and ".join(f"{op.upper()} ladder" for op in ops) or "Kernels"
    return f"{subject} on {ladder.gpu or 'an unknown GPU'}"


def _sources(ladder: LadderAnalysis) -> list[Block]:
    items = []
    for capture in ladder.captures:
        manifest = capture.analysis.manifest or {}
        tools = ", ".join(f"{name} {tool.get('version')}" for name, tool in (manifest.get("tools") or {}).items())
        when = "captured" if manifest.get("started") else "file written"
        what = f"`{capture.name}`, {when} {capture.started:%Y-%m-%d %H:%M} UTC" + (f" with {tools}" if tools else "")
        items.append(what)
    ceilings = [f"{roof.name}: {roof_rate(roof)} ({roof.source})" for roof in ladder.roofs]
    blocks: list[Block] = [Paragraph("Profiles:"), Bullets(tuple(items))]
    if ceilings and len(ladder.points):
        blocks += [Paragraph("Ceilings (roofs of the roofline, and the '% of roof' columns):"), Bullets(tuple(ceilings))]
    return blocks


SPEEDUP_HEADERS = {LOOP_KEY: "x CPU loop", BLAS_KEY: "x CPU BLAS"}
MEASURED_HEADERS = ("time", "from", "TFLOP/s", "% of peak", "% of cuBLAS", "DRAM GB/s", "FLOP per DRAM byte",
                    "bank conflicts (ld + st)", "n-way (ld / st)", "occupancy", "registers", "shared memory")


def _stage_table(stages: pd.DataFrame) -> Table:
    """Every stage's figures; with CPU stages among them, each stage's speed-up over the CPU's serial
    loop and its BLAS after % of cuBLAS (nsprof.ladder.cpu_speedups, as bench shows them)."""
    titles = _registry_titles()
    speedups = [key for key in (LOOP_KEY, BLAS_KEY) if key in stages and stages[key].notna().any()]
    rows = tuple((row["label"], titles.get((row["op"], row["stage"]), ""), fmt.problem_size(row["size"]),
                  *cells[:5], *(fmt.speedup(row[key]) if pd.notna(row[key]) else fmt.MISSING for key in speedups),
                  *cells[5:])
                 for (_, row), cells in zip(stages.iterrows(), _measured_cells(stages)))
    headers = (*MEASURED_HEADERS[:5], *(SPEEDUP_HEADERS[key] for key in speedups), *MEASURED_HEADERS[5:])
    return Table.preformatted(("stage", "title", "size", *headers), rows,
                              (False, False, False, False, False, *([True] * (len(headers) - 2))))


def _kernel_table(kernels: pd.DataFrame) -> Table:
    rows = tuple((row["label"], *cells) for (_, row), cells in zip(kernels.iterrows(), _measured_cells(kernels)))
    return Table.preformatted(("kernel", *MEASURED_HEADERS), rows, (False, False, False, *([True] * 10)))


def _measured_cells(work: pd.DataFrame) -> list[tuple[str, ...]]:
    """MEASURED_HEADERS' cells, per launch, from the work's one time and speed (nsprof.ladder_analysis.work)."""
    return [(
        fmt.duration_ns(row.get("time_per_launch_ns")), row.get("time_source") or fmt.MISSING,
        fmt.flops_per_s(_scaled(row.get("tflops_per_s"), 1e12), unit=False), _peak_cell(row),
        _percent_of_library(row.get("pct_of_library")), fmt.bytes_per_s(_scaled(row.get("dram_gbytes_per_s"), 1e9), unit=False),
        fmt.ratio(row.get("intensity_flop_per_byte"), 1), fmt.count(row.get("bank_conflicts_per_launch")),
        f"{fmt.ratio(row.get('smem_ld_nway'))} / {fmt.ratio(row.get('smem_st_nway'))}",
        fmt.percent(row.get("occupancy_pct")), fmt.count(row.get("registers_per_thread")),
        fmt.byte_count(row.get("smem_per_block_bytes")),
    ) for _, row in work.iterrows()]


def _peak_cell(row: pd.Series) -> str:
    """'62.8% FP32': the work's speed against the peak of the units that did its FLOPs."""
    shown = fmt.percent(row.get("pct_of_compute_peak"))
    roof = row.get("compute_roof")
    return f"{shown} {roof}" if shown != fmt.MISSING and isinstance(roof, str) else shown


def _conventions(stages: pd.DataFrame) -> str:
    sources = set(stages["time_source"].dropna())
    time = {"nsys": "nsys: Nsight Systems' GPU time per launch (warm, no profiler replay in it)",
            "ncu": "ncu: Nsight Compute's kernel duration per launch (replayed with caches flushed, so longer)",
            WALL_CLOCK: "wall clock: a CPU stage's median run on the host"}
    said = "; ".join(time[source] for source in sorted(sources, reverse=True))
    libraries = "; ".join(f"{b.stage} ({b.title}) for {get_op(op).title}'s {b.precision.name} stages"
                          for op in sorted(set(stages["op"].dropna())) if op in all_ops() for b in baseline_stages(op))
    return (f"Time, from: {said or 'not measured'}. TFLOP/s: the op's FLOPs (2·M·N·K) over that time, the speed the "
            "chart, the roofline and `nsprof analyze` show too. % of peak: that speed over the peak of the units the "
            "stage's precision runs on (FP32 pipes for fp32, tensor cores for tf32 and fp16; the ceilings above). "
            f"% of cuBLAS: the time of cuBLAS in the stage's own precision ({libraries or 'the library stage'}) "
            "at the same size over the stage's. "
            "DRAM bandwidth (Nsight Compute's bytes over its own duration), FLOP per DRAM byte and bank conflicts come "
            "from Nsight Compute, per launch. n-way: shared-memory wavefronts per instruction; the least an access can "
            "take is 1 for 32-bit, 2 for 64-bit and 4 for 128-bit accesses, so only the excess over that minimum is "
            "conflict (the conflicts column counts it; `nsprof explain bank-conflicts`). Occupancy is achieved "
            "(active warps over the maximum); registers per thread and shared memory per block are the main kernel's."
            + "".join(f" {note}." for note in stage_notes(stages)))


@dataclass(frozen=True)
class LadderChart:
    op: str
    file_name: str  # 'tflops.png', 'dram-sgemv.png'
    alt: str
    records: list[dict]  # the bars (_bench_records)
    figure: Figure


def ladder_charts(ladder: LadderAnalysis) -> list[LadderChart]:
    """One bar chart per ladder (an HGEMM bar would dwarf every SGEMM one) of the rate the op is judged
    by: TFLOP/s, or DRAM GB/s (SGEMV, against DRAM). CPU stages are hatched, on a log axis beside the
    GPU's (nsprof.render.ladder); a stage without the rate (a CPU stage has no DRAM counter) is named
    under the title instead of drawn."""
    stages = ladder.work[ladder.work["stage"].notna()]
    ops = list(dict.fromkeys(stages["op"]))
    charts = []
    for op in ops:
        by_bytes = headline(op) == "bytes"  # SGEMV is judged by bandwidth against DRAM, not FLOP/s
        rate, unit, label = ("gbytes", "DRAM GB/s", "DRAM GB/s (ncu's bytes over its own duration, as above)") \
            if by_bytes else ("tflops", "TFLOP/s", "TFLOP/s (per launch, from the time above)")
        every = _bench_records(stages[stages["op"] == op])
        records = [r for r in every if pd.notna(r[rate])]
        if not records:  # no stage of this ladder has the figure: its table says so, nothing to draw
            continue
        title = f"{op.upper()}: {unit} per stage on {ladder.gpu or 'the GPU'}"
        unrated = [r for r in every if pd.notna(r["time"]) and pd.isna(r[rate])]  # timed, but without the figure
        if missing := list(dict.fromkeys(r["stage"] for r in unrated)):
            why = "CPU stages: no DRAM counter on the host" if all(r["on_cpu"] for r in unrated) else f"no {unit} measured"
            title += f"\nnot drawn: {', '.join(missing)} ({why}; their times are in the table)"
        file_name = ("tflops.png" if len(ops) == 1 else f"tflops-{op}.png") if not by_bytes else \
            ("dram.png" if len(ops) == 1 else f"dram-{op}.png")
        alt = f"{op.upper()}: {unit} per stage, dashed line: cuBLAS at the same size"
        if any(r["on_cpu"] for r in records):
            alt += ", hatched: CPU stages (wall clock)"
        charts.append(LadderChart(op, file_name, alt, records, ladder_chart(records, title, rate, label)))
    return charts


def _bench_records(stages: pd.DataFrame) -> list[dict]:
    """The stages as ladder_chart reads bench results, with whether each ran on the CPU and its
    speed-up over the CPU BLAS: the work's own column, the one the stage table shows."""
    titles = _registry_titles()
    return [{"status": "ok", "op": row["op"], "stage": row["label"], "size": row["size"], "tflops": row["tflops_per_s"],
             "gbytes": row.get("dram_gbytes_per_s"), "title": titles.get((row["op"], row["stage"]), row["label"]),
             "time": row.get("time_per_launch_ns"), "on_cpu": row.get("time_source") == WALL_CLOCK,
             BLAS_KEY: row.get(BLAS_KEY)}
            for _, row in stages.iterrows()]


def _roofline(ladder: LadderAnalysis) -> list[Block]:
    """One roofline per ladder (its own precision's roofs) and per capture of other kernels, each
    with the table of where its work is bound."""
    blocks: list[Block] = [
        Heading(2, "Roofline"),
        Paragraph("Each piece of work is drawn once per memory level whose bytes were measured (its FLOPs per "
                  "byte moved at that level), all at its speed (the TFLOP/s above); it is bound by whichever roof "
                  "above it is lowest. Each chart shows the roofs of the units its work did most FLOPs on. The "
                  "tables show, for each, the level where it comes closest to the roof above it, and which roof "
                  "that is: a memory level's bandwidth or a compute peak."),
    ]
    on_cpu = ladder.points[ladder.points["level"] == COMPULSORY]
    if len(on_cpu):
        rules = "; ".join(f"{get_op(op).min_bytes_rule} for {get_op(op).title}" for op in dict.fromkeys(on_cpu["op"]))
        host = "; ".join(f"{roof.name} {roof_rate(roof)} ({roof.source})" for roof in ladder.cpu_roofs)
        blocks.append(Paragraph("A CPU stage has no counters: it is drawn once, at its op's compulsory intensity (its "
                                f"FLOPs over the bytes each input read once and the output written once take: {rules}; "
                                "declared, not measured traffic), at its speed on the wall clock, under the host's own "
                                f"roofs, drawn beside the GPU's: {host}."))
    headers = ("work", "size", "bound", "roof above it", "FLOP per byte", "TFLOP/s", "time from", "% of that roof")
    for chart in roofline_charts(ladder):
        blocks += [Heading(3, f"Roofline: {chart.subject}"),
                   _image(chart.figure, chart.file_name, f"roofline of {chart.subject}")]
        rows = tuple((row["label"], fmt.problem_size(row["size"]), _bound_text(row), _roof_name(row),
                      f"{fmt.ratio(row['intensity_flop_per_byte'], 1)} at {LEVEL_NAMES[row['level']]}"
                      + (" bytes" if row["level"] == COMPULSORY else ""),
                      fmt.flops_per_s(row["gflops_per_s"] * 1e9, unit=False), row["time_source"] or fmt.MISSING,
                      fmt.percent(row["pct_of_roof"]))
                     for _, row in binding_points(chart.points).iterrows())
        blocks.append(Table.preformatted(headers, rows, (False, False, False, False, True, True, False, True)))
    if len(unplaced := unplaced_work(ladder.work, ladder.cpu_roofs)):
        blocks.append(Paragraph("Not on the roofline: " + "; ".join(
            f"{row['label']}" + (f" ({fmt.problem_size(row['size'])})" if isinstance(row["size"], str) else "")
            + f": {row['reason']}" for _, row in unplaced.iterrows()) + "."))
    return blocks


@dataclass(frozen=True)
class RooflineChart:
    subject: str  # 'the SGEMM ladder'
    file_name: str
    points: pd.DataFrame  # the ladder's points only
    figure: Figure


def roofline_charts(ladder: LadderAnalysis) -> list[RooflineChart]:
    """One roofline per ladder (every profile and size of one op) and per capture of other kernels:
    a ladder's roofs are those of its own precision, and ladders at one size do not share a cloud."""
    groups = chart_groups(ladder.points)
    return [RooflineChart(_group_subject(key, points), "roofline.png" if len(groups) == 1 else f"roofline-{key}.png",
                          points, roofline_figure(points, ladder.roofs, ladder.gpu, cpu_roofs=ladder.cpu_roofs))
            for key, points in groups]


def _group_subject(key: str, points: pd.DataFrame) -> str:
    """'the SGEMM ladder', or 'the other kernels of h200-program-torch-train'."""
    if points["stage"].notna().any():
        return f"the {key.upper()} ladder"
    return "the kernels" if key == "kernels" else f"the kernels of {key}"


def _roof_name(row: pd.Series) -> str:
    """The roof over the point: its level's bandwidth when memory-bound, the compute peak otherwise."""
    if not _bound(row):
        return fmt.MISSING
    return f"{_memory_name(row)} bandwidth" if row["bound"] == "memory" else f"{row['compute_roof']} peak"


def _memory_name(row: pd.Series) -> str:
    """The memory whose bandwidth is the point's memory roof: its level's, or the host's for a CPU stage."""
    return CPU_MEMORY_ROOF if row["level"] == COMPULSORY else LEVEL_NAMES[row["level"]]


def _stage_sections(ladder: LadderAnalysis, stages: pd.DataFrame) -> list[Block]:
    """Per stage: what changed and why (registry), what moved against the previous stage, and what
    bounds it now (roofline)."""
    registry = {(s.op, s.stage): s for s in all_stages()}
    changes = stage_changes(stages)
    binding = binding_points(ladder.points)
    blocks: list[Block] = [Heading(2, "Stage by stage")]
    for (op, stage), _ in stages.groupby(["op", "stage"], sort=False):
        described: Stage | None = registry.get((op, stage))
        blocks.append(Heading(3, f"{stage}: {described.title}" if described else stage))
        if described:
            blocks.append(Bullets((f"Changed: {described.changes}.", f"Why: {described.why}.",
                                   f"Should show in: {described.metric}.")))
        mine = [change for change in changes if change["label"] == stage]
        if mine:
            blocks.append(_change_table(mine))
            if any(change["column"].startswith("stall_") and change["after"] is None for change in mine):
                blocks.append(Paragraph(f"Not collected in this profile: {STALLS_HINT}."))
        bounds = [f"{fmt.problem_size(row['size'])}: {_bound_sentence(row)}{_plan_clause(row)}"
                  for _, row in binding[(binding["stage"] == stage) & (binding["op"] == op)].iterrows()]
        if bounds:
            blocks.append(Paragraph("Bound now: " + "; ".join(bounds) + "."))
    return blocks


def _change_table(changes: list[dict]) -> Table:
    rows = []
    for change in changes:
        name, show = CHANGE_COLUMNS[change["column"]]
        if change["previous"] is None:
            before = fmt.MISSING
        else:
            before = NOT_COLLECTED if change["before"] is None else show(change["before"])
        after = NOT_COLLECTED if change["after"] is None else show(change["after"])
        rows.append((fmt.problem_size(change["size"]), name, change["previous"] or "(first stage)", before, after,
                     _relative_change(change["before"], change["after"])))
    return Table.preformatted(("size", "measured (per launch)", "previous stage", "before", "after", "change"), rows,
                              (False, False, False, True, True, True))


def _time_sections(name: str, breakdown: TimeBreakdown) -> list[Block]:
    gpu = tuple((row["activity"], fmt.count(row["count"]), fmt.duration_ns(row["time_ns"]), fmt.percent(row["pct_of_span"]))
                for _, row in breakdown.gpu.iterrows())
    gaps = ", ".join(fmt.duration_ns(gap["duration_ns"]) + (f" at +{fmt.duration_ns(gap['start_ns'])}"
                                                             if gap["start_ns"] else " at the start")
                     for _, gap in breakdown.gaps.iterrows())
    kernels = tuple((fmt.truncate(row["kernel"], 120), fmt.count(row["count"]), fmt.duration_ns(row["time_ns"]),
                     fmt.percent(row["pct_of_gpu_busy"])) for _, row in breakdown.kernels.iterrows())
    api = tuple((row["api"], fmt.count(row["count"]), fmt.duration_ns(row["time_ns"]), fmt.percent(row["pct_of_span"]))
                for _, row in breakdown.api.iterrows())
    return [
        Heading(2, f"Where the time went: `{name}` (Nsight Systems)"),
        Paragraph(f"The capture spans {fmt.duration_ns(breakdown.span_ns)}, from the first CUDA call to the end of "
                  "the last GPU operation. GPU time per activity (overlapping work counted once); idle is the "
                  "rest: start-up, compilation, host work and launch gaps."),
        Table.preformatted(("GPU activity", "count", "time", "% of span"), gpu, (False, True, True, True)),
        Paragraph(f"Longest idle gaps (time from the span's beginning): {gaps or 'none'}."),
        Table.preformatted(("kernel", "launches", "GPU time", "% of GPU busy time"), kernels, (False, True, True, True)),
        Table.preformatted(("CUDA API function", "calls", "CPU time inside", "% of span"), api, (False, True, True, True)),
    ]


def _image(figure: Figure, file_name: str, alt: str) -> Image:
    return Image(file_name, alt, figure_bytes(figure))


def _bound(row: pd.Series) -> str | None:
    """'memory' or 'compute'; None (the points hold None or NaN) where no roof above it is known."""
    return row["bound"] if isinstance(row["bound"], str) and row["bound"] else None


def _bound_text(row: pd.Series) -> str:
    return _bound(row) or "no roof known"


def _bound_sentence(row: pd.Series) -> str:
    level = LEVEL_NAMES[row["level"]]
    if not _bound(row):
        return f"no roof known (at {level}: {fmt.ratio(row['intensity_flop_per_byte'], 1)} FLOP per byte)"
    roof = f"the {_memory_name(row)} roof" if row["bound"] == "memory" else f"the {row['compute_roof']} roof"
    return (f"{row['bound']}-bound, at {fmt.percent(row['pct_of_roof'])} of {roof} "
            f"({fmt.ratio(row['intensity_flop_per_byte'], 1)} FLOP per {level} byte)")


def _plan_clause(row: pd.Series) -> str:
    """Why a tiled stage sits where it does at a size: its launch plan counted in waves on the profile's GPU
    (nsprof.ladder_analysis.profiles.with_launch_plans), where one is counted."""
    return f", launched as {row['launch_plan']}" if isinstance(row.get("launch_plan"), str) else ""


def _relative_change(before: float | None, after: float | None) -> str:
    if before is None or after is None:
        return fmt.MISSING
    if before == 0:
        return "unchanged" if after == 0 else "from 0"
    change = 100 * (after / before - 1)
    return f"{change:+.1f}%" if abs(change) < 10 else f"{change:+.0f}%"


def _registry_titles() -> dict[tuple[str, str], str]:
    return {(s.op, s.stage): s.title for s in all_stages()}


def _scaled(value, factor: float):
    return None if value is None or pd.isna(value) else value * factor


def _percent_of_library(value: float | None) -> str:
    text = fmt.share(value)
    return text if text == fmt.MISSING else f"{text}%"
