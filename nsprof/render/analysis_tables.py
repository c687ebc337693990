"""The tables and the JSON document of `nsprof analyze` (render layer: pandas and rich load here,
when the command runs, never for `nsprof --help`)."""

from __future__ import annotations

import json
from typing import Any, cast

import pandas as pd

from nsprof.analyze.capture_analysis import CaptureAnalysis
from nsprof.analyze.families import rules_applied
from nsprof.analyze.launch_findings import FINDING_COLUMNS
from nsprof.ladder.cpu_speedups import BLAS_KEY, LOOP_KEY
from nsprof.ladder.registry import headline
from nsprof.ladder_analysis.capture import stages_of
from nsprof.ladder_analysis.work import WALL_CLOCK
from nsprof.parse.model import RECAPTURE, reported_errors
from nsprof.parse.nsys_sqlite import GRAPH_NAME
from nsprof.render import format as fmt
from nsprof.render.document import Block, Drawing, Paragraph, Table
from nsprof.render.document_writers import json_ready, to_terminal
from nsprof.render.json_documents import AnalyzeDocument
from nsprof.render.range_tables import no_ranges, ranges_table
from nsprof.render.stage_notes import PEAK_SAID, stage_notes
from nsprof.render.table_names import named_rows, telling_names
from nsprof.render.terminal_table import fit_columns, fit_named, in_mb, in_us, left_out, plain
from nsprof.shorten import shortened

KERNEL_FIELDS = (
    "id", "kernel", "nvtx", "duration_ns", "flops", "fp16_flops", "tensor_flops", "dram_bytes", "l2_bytes",
    "gflops_per_s", "dram_gbytes_per_s", "intensity_flop_per_byte", "intensity_flop_per_l2_byte",
    "smem_ld_conflicts", "smem_st_conflicts", "smem_ld_nway", "smem_st_nway",
    "fp32_pct_of_peak", "tensor_pct_of_peak", "dram_pct_of_peak", *FINDING_COLUMNS,
)

# kernel_groups' records: the group, its times, the medians of the launch records' other figures, its launch ids
GROUP_FIELDS = ("kernel", "grid", "block", "launches", "median_ns", "min_ns", "max_ns",
                *(field for field in KERNEL_FIELDS if field not in ("id", "kernel", "nvtx", "duration_ns", "grid", "block")),
                "ids")


def print_analysis(analysis: CaptureAnalysis, is_directory: bool, console, launches: bool = False) -> None:
    """Every table the profile has, each fitting the console's width."""
    to_terminal(analysis_blocks(analysis, is_directory, console.width, launches), console, spaced=False)


NO_VERDICT = ("No verdict on why the GPU waits: the capture holds no CUDA call (nsys's runtime table) to link its GPU "
              "work to the host; capture with nsys -t cuda (nsprof profile does)")


def analysis_blocks(analysis: CaptureAnalysis, is_directory: bool, width: int, launches: bool = False) -> list[Block]:
    """The tables (and the note on missing metrics) as document blocks, `width` columns wide: a
    ladder's stages first, then where the time goes (nsys and ncu joined), then each tool's own;
    ncu's kernels one row per kernel and launch configuration, or per launch with `launches`."""
    from nsprof.render.host_tables import host_blocks
    from nsprof.render.hot_kernels_table import hot_kernels_table

    blocks: list[Block] = [Paragraph(line) for line in processing_warning(analysis.processing_errors)]
    if len(analysis.gpu_models) > 1:  # machines of different kinds in one capture: say whose ceilings apply
        blocks.append(Paragraph(f"Warning: the capture holds {len(analysis.gpu_models)} GPU models "
                                f"({', '.join(analysis.gpu_models)}); ceilings and % of peak are the first's"))
    stages = stages_of(analysis)
    if is_directory and not stages.empty:  # a ladder's analysis leads with its stages
        blocks.append(_stages_table(stages, width))
    elif analysis.host is not None:  # a program's leads with why its GPU waits, and what to fix first
        blocks += host_blocks(analysis.host, analysis.hot_kernels, width, analysis.loop, analysis.phases)
    elif analysis.kernel_summary is not None and len(analysis.kernel_summary):  # GPU work, and no verdict: say why
        blocks.append(Paragraph(NO_VERDICT))
    tool = analysis.timeline_tool
    if analysis.hot_kernels is not None and len(analysis.hot_kernels):
        blocks.append(hot_kernels_table(analysis.hot_kernels, width, analysis.harness, tool))
    if analysis.triton_kernels is not None and len(analysis.triton_kernels):
        blocks.append(_triton_table(analysis.triton_kernels, width))
    return blocks + _nsys_blocks(analysis, width, tool) + _ncu_blocks(analysis, width, launches)


def _nsys_blocks(analysis: CaptureAnalysis, width: int, tool: str) -> list[Block]:
    """The timeline's tables: kernels by total time (or their families), copies, GPU utilization, NVTX ranges."""
    blocks: list[Block] = []
    if analysis.kernel_summary is not None:
        summary = analysis.kernel_families if analysis.kernel_families is not None else analysis.kernel_summary
        blocks += [_kernel_summary_table(summary, width, tool), _memcpy_summary_table(analysis.memcpy_summary, tool),
                   _utilization_table(analysis.gpu_utilization or [], width, tool)]
    if analysis.ranges is not None:
        ranges = analysis.range_families if analysis.range_families is not None else analysis.ranges
        blocks.append(ranges_table(ranges, analysis.unattributed, analysis.attribution, width, tool) if len(ranges)
                      else Paragraph(no_ranges(analysis.unattributed, tool)))
    return blocks


def _ncu_blocks(analysis: CaptureAnalysis, width: int, launches: bool) -> list[Block]:
    """ncu's tables: its kernels (per launch with `launches`), its rules' advice, and what the capture lacks."""
    if analysis.kernels is None:
        return []
    blocks: list[Block] = [_launches_table(analysis, width) if launches else _kernel_groups_table(analysis, width)]
    if analysis.rules is not None and len(analysis.rules):
        blocks.append(_rules_table(analysis.rules))
    if note := _missing_note(analysis.missing_metrics, width):
        blocks.append(note)
    return blocks


def processing_warning(errors: tuple[str, ...]) -> list[str]:
    """The line a capture nsys partly failed to process opens with: what it reported, and how to
    capture again."""
    if not errors:
        return []
    return [f"Warning: {reported_errors(errors, 'nsys', 'this capture')}: some of its work may be missing from every "
            f"figure below; {RECAPTURE}."]


def analysis_json(analysis: CaptureAnalysis, is_directory: bool) -> str:
    return json.dumps(_document(analysis, is_directory), indent=2)


def _document(analysis: CaptureAnalysis, is_directory: bool) -> AnalyzeDocument:
    """The JSON document: the GPU, then each part the capture has (a program's, nsys's, ncu's), a ladder's stages last."""
    doc: dict[str, Any] = {"gpu": analysis.gpu, "ceiling": analysis.ceiling.to_json() if analysis.ceiling else None,
                           "processing_errors": list(analysis.processing_errors)}
    if len(analysis.gpu_models) > 1:
        doc["gpu_models"] = analysis.gpu_models
    doc |= _program_part(analysis) | _nsys_part(analysis, is_directory) | _ncu_part(analysis, is_directory)
    if is_directory:
        doc["stages"] = _records(stages_of(analysis))
    return cast(AnalyzeDocument, doc)  # built part by part: tests/test_json_schemas.py holds real ones to the type


def _program_part(analysis: CaptureAnalysis) -> dict[str, Any]:
    """A program's host side, loop and phases, hot kernels and Triton kernels, where it has them."""
    part: dict[str, Any] = {}
    if analysis.host is not None:
        part["host"] = analysis.host
    if analysis.loop is not None:
        part["iterations"] = analysis.loop.iterations.to_json() if analysis.loop.iterations else None
        part["phases"] = [phase.to_json() for phase in analysis.phases]
        part["loop"] = analysis.loop.to_json()
    if analysis.hot_kernels is not None:
        part["hot_kernels"] = _records(analysis.hot_kernels)
        part["harness"] = analysis.harness
    if analysis.triton_kernels is not None:
        part["triton_kernels"] = _records(analysis.triton_kernels)
    return part


def _nsys_part(analysis: CaptureAnalysis, is_directory: bool) -> dict[str, Any]:
    """The timeline's summaries: kernels, copies, GPU utilization, and the NVTX ranges (a ladder's
    directory always has the ranges, empty or not)."""
    part: dict[str, Any] = {}
    if analysis.kernel_summary is not None:
        part["kernel_summary"] = _records(analysis.kernel_summary)
        if analysis.kernel_families is not None:
            part["kernel_families"] = _records(analysis.kernel_families)
        part["memcpy_summary"] = _records(analysis.memcpy_summary)
        part["gpu_utilization"] = analysis.gpu_utilization
    if analysis.unattributed is not None:
        part["unattributed"] = analysis.unattributed
    if analysis.ranges is not None or is_directory:
        part["attribution"] = analysis.attribution
        part["ranges"] = _records(analysis.ranges)
        if analysis.range_families is not None:
            part["range_families"] = _records(analysis.range_families)
    return part


def _ncu_part(analysis: CaptureAnalysis, is_directory: bool) -> dict[str, Any]:
    """ncu's launches and kernel groups, each launch with its rule results, and the metrics the
    capture lacks (a ladder's directory always has the kernels, empty or not)."""
    if analysis.kernels is None and not is_directory:
        return {}
    kernels, groups = analysis.kernels, analysis.kernel_groups
    part: dict[str, Any] = {
        "kernels": _records(None if kernels is None else kernels[[c for c in KERNEL_FIELDS if c in kernels]]),
        "kernel_groups": _records(None if groups is None else groups[[c for c in GROUP_FIELDS if c in groups]])}
    if analysis.rules is not None:
        for record in part["kernels"]:
            record["rules"] = _kernel_rules(analysis.rules, record["id"], record["kernel"])
        part["missing_metrics"] = analysis.missing_metrics
    return part


def _kernel_rules(rules: pd.DataFrame, launch_id: int, kernel: str) -> list[dict]:
    """ncu's rule results for one launch, largest estimated speedup first."""
    mine = rules[(rules["id"] == launch_id) & (rules["kernel"] == kernel)]
    return _records(mine.drop(columns=["id", "kernel"]))


def _records(frame: pd.DataFrame | None) -> list[dict]:
    """Rows as JSON-ready dicts: NaN, NA and infinities become null, numpy scalars Python ones."""
    if frame is None:
        return []
    return [json_ready(row) for row in frame.to_dict("records")]


def _dims(text: str) -> str:
    """'(64, 4, 1)' -> '64x4', '(128, 1, 1)' -> '128': a grid or block without its trailing 1s."""
    parts = [part.strip() for part in str(text).strip("()").split(",")]
    while len(parts) > 1 and parts[-1] == "1":
        parts.pop()
    return "x".join(parts)


def _tflops(gflops_per_s) -> str:
    return fmt.flops_per_s(gflops_per_s * 1e9, unit=False)


def _gbytes(gbytes_per_s) -> str:
    return fmt.bytes_per_s(gbytes_per_s * 1e9, unit=False)


# Table columns: (title, record key, format: a format spec, a function of the value, or "" for
# text). Keys ending in _ns are shown in microseconds, bytes in MB; rates in one unit everywhere
# (nsprof.render.format: TFLOP/s, GB/s); "% FP32", "% TC" (tensor cores), "% DRAM" are of the peak.
_NWAY = (("smem ld\nn-way", "smem_ld_nway", ".2f"), ("smem st\nn-way", "smem_st_nway", ".2f"))
_RATES = (("TFLOP/s", "gflops_per_s", _tflops), ("% FP32", "fp32_pct_of_peak", ".1f"), ("% TC", "tensor_pct_of_peak", ".1f"),
          ("DRAM\nGB/s", "dram_gbytes_per_s", _gbytes), ("% DRAM", "dram_pct_of_peak", ".1f"),
          ("FLOP/B", "intensity_flop_per_byte", ".1f"), *_NWAY)
# ncu's Speed Of Light and launch figures, which every capture with its default sections has
_FINDINGS = (("SM\n%", "sm_throughput_pct", ".1f"), ("mem\n%", "memory_throughput_pct", ".1f"),
             ("occ.\n%", "occupancy_pct", ".0f"), ("regs", "registers_per_thread", ".0f"), ("bound", "bound", ""))
KERNEL_COLUMNS = (("id", "id", "d"), ("kernel", "kernel", ""), ("time us", "duration_ns", in_us(",.2f")), *_FINDINGS,
                  *_RATES, ("innermost range", "innermost_range", ""))
GROUP_COLUMNS = (("kernel", "kernel", ""), ("grid", "grid", _dims), ("block", "block", _dims), ("count", "launches", ",d"),
                 ("median\nus", "median_ns", in_us(",.2f")), ("min\nus", "min_ns", in_us(",.2f")),
                 ("max\nus", "max_ns", in_us(",.2f")), *_FINDINGS, *_RATES)
# A stage's figures as the report and the roofline show them (nsprof.ladder_analysis.work: one time, one speed).
STAGE_COLUMNS = (("op", "op", ""), ("stage", "stage", ""), ("size", "size", ""), ("launches", "launches", "d"),
                 ("time us", "time_per_launch_ns", lambda ns: format(ns / 1e3, ",.2f" if ns < 1e7 else ",.0f")),
                 ("from", "time_source", ""),
                 ("TFLOP/s", "tflops_per_s", lambda value: fmt.flops_per_s(value * 1e12, unit=False)),
                 ("% peak", "pct_of_compute_peak", ".1f"), ("DRAM\nGB/s", "dram_gbytes_per_s", _gbytes),
                 ("% DRAM", "dram_pct_of_peak", ".1f"), ("FLOP/B", "intensity_flop_per_byte", ".1f"), *_NWAY,
                 ("bank\nconflicts", "bank_conflicts_per_launch", lambda value: fmt.count(value)),
                 ("x CPU\nloop", "speedup_vs_cpu_loop", fmt.speedup), ("x CPU\nBLAS", "speedup_vs_cpu_blas", fmt.speedup))
RATES_SAID = "TFLOP/s: FP32, FP16 (CUDA cores) and tensor FLOPs; % FP32 and % TC: their own only"
# Kernel-table columns left out first when the terminal is too narrow (the rest stay in --json).
KERNEL_DROP_ORDER = ("innermost_range", "smem_st_nway", "smem_ld_nway", "tensor_pct_of_peak", "fp32_pct_of_peak",
                     "dram_pct_of_peak", "intensity_flop_per_byte", "dram_gbytes_per_s", "registers_per_thread",
                     "occupancy_pct")
GROUP_DROP_ORDER = ("smem_st_nway", "smem_ld_nway", "tensor_pct_of_peak", "fp32_pct_of_peak", "dram_pct_of_peak",
                    "intensity_flop_per_byte", "min_ns", "dram_gbytes_per_s", "registers_per_thread", "occupancy_pct",
                    "max_ns", "memory_throughput_pct", "sm_throughput_pct")
NAME_WIDTHS = (26, 20, 16, 12)  # ncu's kernels tables: names this long at most (then ' [2]' where needed)
# Stage-table columns left out first when the terminal is too narrow: bank conflicts, what the
# ladder teaches, go last (after where the time came from and DRAM bandwidth, both in --json).
STAGE_DROP_ORDER = ("smem_st_nway", "dram_pct_of_peak", "launches", "op", "intensity_flop_per_byte", "smem_ld_nway",
                    "speedup_vs_cpu_loop", "time_source", "dram_gbytes_per_s", "pct_of_compute_peak",
                    "speedup_vs_cpu_blas", "bank_conflicts_per_launch")
# A ladder judged by bandwidth (an op whose headline is bytes: SGEMV) leads with DRAM and keeps it
# longest; its FLOP rate and % of the FP32 peak go first.
_BYTES_FIRST = ("op", "stage", "size", "launches", "time_per_launch_ns", "time_source", "dram_gbytes_per_s",
                "dram_pct_of_peak")
BYTES_STAGE_COLUMNS = tuple(sorted(STAGE_COLUMNS, key=lambda column: _BYTES_FIRST.index(column[1])
                                   if column[1] in _BYTES_FIRST else len(_BYTES_FIRST)))
BYTES_STAGE_DROP_ORDER = ("smem_st_nway", "pct_of_compute_peak", "launches", "op", "intensity_flop_per_byte",
                          "smem_ld_nway", "speedup_vs_cpu_loop", "time_source", "tflops_per_s", "bank_conflicts_per_launch",
                          "speedup_vs_cpu_blas", "dram_pct_of_peak")
STAGE_ROWS = 60  # a ladder's stages at its sizes; past this many rows the terminal shows the first
SUMMARY_NAME_WIDTHS = (48, 40, 32, 28, 24, 20, 16)  # nsys's kernel summary: names this long at most
BETWEEN_NAME_WIDTHS = (32, 24, 20, 16, 12)  # the kernels either side of the longest idle gap, each
SUMMARY_ROWS = 12  # the terminal shows the kernels with the largest totals; --json has every one
RULE_ROWS = 10  # ncu rule results shown, largest estimated speedup first


def _as_nsys_stats(reports: str, tool: str) -> str:
    """Where a summary's figures come from: nsys stats' reports, or computed as they compute them."""
    return f"as nsys stats -r {reports}" if tool == "nsys" else f"from {tool}, computed as nsys stats -r {reports}"


def _kernel_summary_table(summary: pd.DataFrame, width: int, tool: str = "nsys") -> Table:
    """One row per kernel name (kernel_summary), or per name family (kernel_family_summary)."""
    records = summary.head(SUMMARY_ROWS).to_dict("records")
    grouped = "names" in summary
    what = "kernel families" if grouped else "kernels"
    more = f" and {len(summary) - SUMMARY_ROWS} more {what}" if len(summary) > SUMMARY_ROWS else ""
    caption = (f"{_as_nsys_stats('cuda_gpu_kern_sum', tool)}; names keep the part that tells kernels apart "
               f"([2]: another kernel that reads alike, such as another instance of a template), full names{more} in --json"
               + (f" (kernel_families; kernel_summary: one row per name); {int(summary['names'].sum()):,} kernel names "
                  f"in {len(summary):,} families (names: how many), one row each: "
                  + "; ".join(rules_applied(name for members in summary.loc[summary["names"] > 1, "members"]
                                            for name in members)) if grouped else ""))
    if summary["kernel"].str.startswith(GRAPH_NAME.format("")).any():
        caption += ("; CUDA graph: launches of one graph traced at graph level (nsys's default), which "
                    "cuda_gpu_kern_sum leaves out; nsys profile --cuda-graph-trace=node shows their kernels")
    columns = [("kernel", "kernel", ""), *([("names", "names", ",d")] if grouped else []), ("count", "count", ",d"),
               ("total us", "total_ns", in_us(",.1f")), ("avg us", "avg_ns", in_us(",.1f")),
               ("median us", "median_ns", in_us(",.1f")), ("% time", "pct", ".1f")]
    shown, rows = fit_named(columns, named_rows(records), SUMMARY_NAME_WIDTHS, width, ("avg_ns",))
    return Table(f"Kernels by total time ({tool})", tuple(shown), rows, caption, left_out=left_out(columns, shown, rows))


TRITON_ROWS = 12  # the Triton kernels with the most time; --json has every one


def _triton_table(kernels: pd.DataFrame, width: int) -> Table:
    """One row per Triton kernel, launch configuration and shared memory, with what Triton compiled
    (nsprof.analyze.triton_kernels): the configurations of one @triton.jit function told apart."""
    from nsprof.render.hot_kernels_table import short_size

    records = [{**row, "grid": short_size(row["grid"]), "block": short_size(row["block"]),
                "shared_kb": row["shared_bytes"] / 1024} for row in kernels.head(TRITON_ROWS).to_dict("records")]
    columns = [("kernel", "kernel", ""), ("grid", "grid", ""), ("block", "block", ""), ("warps", "num_warps", ""),
               ("stages", "num_stages", ""), ("shared\nKB", "shared_kb", ",.0f"), ("launches", "launches", ",d"),
               ("total us", "total_ns", in_us(",.1f")), ("% time", "pct", ".1f"), ("source", "source", "")]
    shown, rows = fit_named(columns, named_rows(records), SUMMARY_NAME_WIDTHS, width, ("source", "launches", "stages"))
    ambiguous = int((kernels["compiled"] != 1).sum())
    caption = ("Triton's metadata of each kernel it compiled in this run (the profile's triton-cache/), matched "
               "by name, block (warps x 32 threads) and dynamic shared memory; every launch, autotuning trials "
               "included (the hot-kernel table leaves those out)"
               + (f"; {ambiguous} {'row matches' if ambiguous == 1 else 'rows match'} no compiled kernel, or "
                  "several (no warps or stages shown)" if ambiguous else "")
               + (f"; {len(kernels) - TRITON_ROWS} more in --json (triton_kernels)" if len(kernels) > TRITON_ROWS else ""))
    return Table("Triton kernels (nsys + Triton's cache)", tuple(shown), rows, caption, left_out=left_out(columns, shown, rows))


def _memcpy_summary_table(summary: pd.DataFrame, tool: str = "nsys") -> Table:
    columns = (("kind", "kind", ""), ("count", "count", ",d"), ("MB", "transfer_bytes", in_mb(",.2f")),
               ("total us", "total_ns", in_us(",.1f")), ("GB/s", "gbytes_per_s", ",.1f"), ("pageable", "pageable_count", ",d"))
    caption = "no memory transfers in this capture" if summary.empty else \
        _as_nsys_stats("cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum", tool)
    rows = [{**row, "transfer_bytes": row["bytes"]} for row in summary.to_dict("records")]  # shown in MB
    return Table(f"Memory transfers ({tool})", columns, rows, caption)


def _utilization_table(devices: list[dict], width: int, tool: str = "nsys") -> Table:
    gaps = [device["idle_gaps"][0] if device["idle_gaps"] else None for device in devices]
    ends = [name for gap in gaps if gap for name in (gap["after"], gap["before"])]

    def rows_for(name_width: int) -> list[dict]:
        shown = iter(telling_names(ends, name_width))
        return [{**device, "gap_ns": gap and gap["duration_ns"], "gap_at_ns": gap and gap["start_ns"],
                 "between": gap and f"{next(shown)} → {next(shown)}"} for device, gap in zip(devices, gaps)]

    columns = [("GPU", "device_id", "d"), ("busy %", "pct", ".2f"), ("busy us", "busy_ns", in_us(",.1f")),
               ("span us", "span_ns", in_us(",.1f")), ("longest\nidle us", "gap_ns", in_us(",.1f")),
               ("at us", "gap_at_ns", in_us(",.1f")), ("between", "between", "")]
    shown, rows = fit_named(columns, rows_for, BETWEEN_NAME_WIDTHS, width, ("gap_at_ns", "span_ns"))
    caption = ("busy: any kernel, graph, copy or memset running, overlaps counted once; span: first to last "
               "of them; the longest idle gaps are in --json" if devices else "no GPU work in this export")
    return Table(f"GPU utilization ({tool})", tuple(shown), rows, caption, left_out=left_out(columns, shown, rows))


def _launches_table(analysis: CaptureAnalysis, width: int) -> Table:
    kernels = analysis.kernels
    assert kernels is not None  # analysis_blocks shows launches only of an analysis with ncu's
    records = [{**row, "innermost_range": row["nvtx"][-1] if row["nvtx"] else None} for row in kernels.to_dict("records")]
    caption = f"each launch as ncu replayed it (caches flushed): its duration and the rates over it; {RATES_SAID}; "
    return _fitted("Kernel launches (ncu)", KERNEL_COLUMNS, records, width, KERNEL_DROP_ORDER,
                   caption + _ceiling_caption(analysis))


def _kernel_groups_table(analysis: CaptureAnalysis, width: int) -> Table:
    groups = analysis.kernel_groups
    assert groups is not None  # the analysis groups the kernels wherever there are some
    records = groups.to_dict("records")
    caption = ("one row per kernel and launch configuration (grid, block: trailing 1s left out), as ncu replayed it "
               "(caches flushed): count of launches, their median, min and max duration, every other column the "
               f"median over the launches (each launch: --launches); {RATES_SAID}; ")
    return _fitted("Kernels (ncu)", GROUP_COLUMNS, records, width, GROUP_DROP_ORDER, caption + _ceiling_caption(analysis))


def _fitted(title: str, columns: tuple, records: list[dict], width: int, drop_order: tuple[str, ...], caption: str) -> Table:
    """A kernels table of the columns some record has a value in (and the kernel's name and time),
    fitted to `width`: columns left out in `drop_order`, then names shortened to the part that tells them apart (NAME_WIDTHS)
    rather than broken across lines; its caption says which columns were left out."""
    always = ("id", "kernel", "duration_ns", "launches", "median_ns")
    present = [column for column in columns
               if column[1] in always or any(plain(record.get(column[1])) is not None for record in records)]
    shown, rows = fit_named(present, named_rows(records), NAME_WIDTHS, width, drop_order)
    return Table(title, tuple(shown), rows, caption, left_out=left_out(present, shown, rows))


def _rules_table(rules: pd.DataFrame) -> Table:
    """One row per ncu rule: how many launches it fired on, its largest estimated speedup, and its
    advice for that launch (first sentence)."""
    grouped = rules.groupby("rule", sort=False)  # rules come largest speedup first: head(1) is the largest
    rows = [{"rule": rule, "launches": group["id"].nunique(), "advice": _first_sentence(group["message"].iloc[0], 160),
             "speedup": _speedup(group.iloc[0])} for rule, group in grouped]
    columns = (("rule", "rule", ""), ("launches", "launches", "d"), ("largest\nspeedup %", "speedup", ""),
               ("advice where the speedup is largest (per launch: --json)", "advice", ""))
    caption = "ncu's estimate of the time a fix could save: g of the whole kernel, l of the part the rule looks at"
    return Table("ncu's advice (rule results)", columns, rows, caption)


def _speedup(rule: pd.Series) -> str | None:
    if plain(rule["speedup_pct"]) is None:
        return None
    return f"{rule['speedup_pct']:.1f}" + (f" {rule['speedup_type'][0]}" if rule["speedup_type"] else "")


def _first_sentence(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    end = text.find(". ")
    text = text if end < 0 else text[: end + 1]
    return shortened(text, limit)


def _missing_note(missing: dict | None, width: int) -> Drawing | None:
    """What the capture lacks, with ncu's option on lines of their own that copy as one (continued
    with a backslash between metrics, never inside a name, so they fit `width` where a name does)."""
    if not missing or not missing["metrics"]:
        return None
    labels = sorted({label.split(" (")[0] for label in missing["labels"]})
    said = f"Not in this capture, and read by nsprof's analysis: {', '.join(labels)}."
    for name, blind_to in missing.get("partial", {}).items():
        said += f" It has {name}, which does not count {blind_to}."
    if "asked" not in missing:  # another tool's capture
        return Drawing(f"{said} Capture with `nsprof profile` (-- CMD for your program), or add these "
                       f"{len(missing['metrics'])} metrics to ncu's options:", continued_lines(missing["ncu_options"], width))
    if len(missing["asked"]) == len(missing["metrics"]):
        return Drawing(f"{said} This nsprof capture asked ncu for them and ncu gave no value (they do not apply to "
                       "these kernels, or this ncu does not know them).", [])
    version = f" (nsprof {missing['nsprof_version']})" if missing.get("nsprof_version") else ""
    return Drawing(f"{said} This capture{version} did not ask ncu for them: capture again with `nsprof profile "
                   f"--metrics default` (the preset that collects them, with the same other options), or add to ncu's "
                   "options:", continued_lines(missing["ncu_options"], width))


def continued_lines(option: str, width: int) -> list[str]:
    """`--metrics a,b,c` as shell lines of at most `width` characters: broken after a comma with a
    backslash, the lines after the first flush left (a shell joins them back into one word)."""
    flag, _, value = option.partition(" ")
    lines, line = [], f"  {flag} "
    for metric in value.split(","):
        piece = metric if line.endswith(" ") else "," + metric
        if len(line) + len(piece) + 2 > width and not line.endswith(" "):  # room for ",\\"
            lines.append(line + ",\\")
            line, piece = "", metric
        line += piece
    return [*lines, line]


def _stages_table(stages: pd.DataFrame, width: int) -> Table:
    rows = stages.head(STAGE_ROWS).to_dict("records")  # a capture of 20,000 CPU stage records: --json has all
    by_bytes = bool(rows) and all(headline(row.get("op")) == "bytes" for row in rows)
    on_cpu = any(row.get("time_source") == WALL_CLOCK for row in rows)
    table_columns = tuple(column for column in (BYTES_STAGE_COLUMNS if by_bytes else STAGE_COLUMNS)
                          if on_cpu or column[1] not in (LOOP_KEY, BLAS_KEY))
    columns = fit_columns(list(table_columns), rows, width, BYTES_STAGE_DROP_ORDER if by_bytes else STAGE_DROP_ORDER)
    said = ("time: nsys GPU time per launch (warm, no replay) where nsys saw the stage, else ncu's duration "
            "(replayed, caches flushed); TFLOP/s: the op's FLOPs over that "
            f"time, as report and roofline show it; {PEAK_SAID}; DRAM: ncu's bytes over its own duration; "
            "n-way: shared-memory wavefronts per instruction, at least 1, 2 or 4 for 32-, 64- or 128-bit accesses; "
            "bank conflicts: the wavefronts over that least, per launch (nsprof explain bank-conflicts)")
    said += "".join(f"; {note}" for note in stage_notes(stages))
    if len(stages) > STAGE_ROWS:
        said += f"; {len(stages) - STAGE_ROWS:,} more stage rows in --json"
    return Table("Stages (NVTX ranges nsprof:OP/STAGE/SIZE)", tuple(columns), rows, said,
                 left_out=left_out(table_columns, columns, rows))



def _ceiling_caption(analysis: CaptureAnalysis) -> str:
    c = analysis.ceiling
    if c is None:
        return f"% of peak: no datasheet entry for {analysis.gpu or 'an unknown GPU'}"
    def source(field: str) -> str:  # "measured <date> by <method>" -> "measured <date>"
        return (c.source_of(field) or "").split(" by ")[0]

    peaks = (("fp32_tflop_per_s", fmt.flops_per_s, "FP32"), ("dram_tbyte_per_s", fmt.bytes_per_s, "DRAM"))
    known = [f"{shown(getattr(c, field) * 1e12)} {name} ({source(field)})"
             for field, shown, name in peaks if getattr(c, field) is not None]
    unknown = [name for field, _, name in peaks if getattr(c, field) is None]
    caption = f"% of peak against the {c.gpu}: {', '.join(known)}" if known else f"% of peak against the {c.gpu}"
    if unknown:
        caption += f"{';' if known else ':'} no {' or '.join(unknown)} peak known (measure it: nsprof ceilings)"
    return caption
