"""The NVTX range table of `nsprof analyze`: GPU work launched while each range (or range family)
was open, fitted to the terminal by shortening long range names and leaving out count columns."""

from __future__ import annotations

import pandas as pd

from nsprof.analyze.families import rules_applied
from nsprof.analyze.nvtx_attribution import PROCESS, THREAD
from nsprof.render.document import Table
from nsprof.render.table_names import named_rows
from nsprof.render.terminal_table import fit_named, in_mb, in_us, left_out, table_width

# Columns as in nsprof.render.analysis_tables: (title, record key, format); times in us, bytes in MB.
RANGE_COLUMNS = (("range", "range", ""), ("names", "names", ",d"), ("count", "count", ",d"), ("kernels", "kernels", ",d"),
                 ("graphs", "graphs", ",d"), ("GPU\ntime us", "gpu_time_ns", in_us(",.1f")),
                 ("kernel\nus", "kernel_ns", in_us(",.1f")), ("copy\nus", "copy_ns", in_us(",.1f")),
                 ("memcpys", "memcpy_count", ",d"), ("memcpy\nMB", "memcpy_bytes", in_mb(",.1f")),
                 ("memsets", "memset_count", ",d"), ("GPU\nops", "gpu_ops", ",d"))
# Range-table columns left out, in this order, once long range names are down to RANGE_NAME_MIN
# characters; the range and its three times always stay.
RANGE_DROP_ORDER = ("memset_count", "gpu_ops", "memcpy_count", "memcpy_bytes", "count", "names", "kernels", "graphs")
RANGE_SECONDARY = 4  # the copy and op counts: left out before a name is cut below RANGE_NAME_MIN
RANGE_NAME_MIN = 28
RANGE_NAME_WIDTHS = (64, 48, 40, 34, 28, 24, 20, 16, 12)
RANGE_ROWS = 25  # about a screenful: beyond it, the families with the most GPU time (all in --json)
ATTRIBUTION_WORDS = {THREAD: "by the thread that pushed it", PROCESS: "by any thread of its process"}
GPU_TIME_SAID = ("GPU time = kernel (kernels, graph launches) + copy (memcpys, memsets): durations summed, "
                 "overlapping work in full, not nvtx_gpu_proj_sum's first-to-last span")
GRAPHS_SAID = ("graphs: CUDA graph launches traced at graph level, their kernels unseen "
               "(nsys profile --cuda-graph-trace=node traces them)")


def no_ranges(unattributed: dict | None, tool: str) -> str:
    """The line that stands for an empty table of NVTX ranges."""
    kernels = f": its {unattributed['kernels']:,} kernels ran in none" if unattributed and unattributed["kernels"] else ""
    return f"NVTX ranges ({tool}): none in this capture{kernels} (the loop, where there is one, is found in the GPU work)"


def ranges_table(ranges: pd.DataFrame, unattributed: dict | None, attribution: str, width: int, tool: str = "nsys") -> Table:
    """One row per range family (summarize_range_families; or per name, from summarize_ranges),
    the RANGE_ROWS with the most GPU time where there are more."""
    notes = [GPU_TIME_SAID]
    has_graphs = bool(len(ranges) and ranges["graphs"].sum())
    grouped = "names" in ranges and bool((ranges["names"] > 1).any())
    if grouped:
        notes.append(_families_note(ranges))
    shown = ranges
    if len(ranges) > RANGE_ROWS:
        shown = ranges.sort_values(["gpu_time_ns", "count"], ascending=False, kind="stable").head(RANGE_ROWS)
        notes.append(f"the {RANGE_ROWS} {'families' if grouped else 'ranges'} with the most GPU time; "
                     f"{len(ranges) - RANGE_ROWS:,} more in --json ({'range_families' if grouped else 'ranges'})")
    if unattributed and unattributed["kernels"]:
        notes.append(_unattributed_note(unattributed, attribution, has_graphs))
    if has_graphs:
        notes.append(GRAPHS_SAID)
    present = _present_columns(has_graphs, grouped)
    columns, rows = _fit_ranges(present, shown.to_dict("records"), width)
    if any(row["range"] != name for row, name in zip(rows, shown["range"])):
        notes.append("long range names keep the part that tells them apart (full names in --json)")
    return Table(f"NVTX ranges ({tool}): GPU work launched while each was open, {ATTRIBUTION_WORDS[attribution]}",
                 tuple(columns), rows, "; ".join(notes), left_out=left_out(present, columns, rows))


def _present_columns(has_graphs: bool, grouped: bool) -> list:
    """RANGE_COLUMNS less those with nothing to say: graphs where no range launched one, names
    where no family groups several."""
    return [column for column in RANGE_COLUMNS if (column[1] != "graphs" or has_graphs) and (column[1] != "names" or grouped)]


def _families_note(ranges: pd.DataFrame) -> str:
    """How many range names the families group, and by which rules."""
    merged = [name for members in ranges.loc[ranges["names"] > 1, "members"] for name in members]
    return (f"{int(ranges['names'].sum()):,} range names in {len(ranges):,} families (names: how many), "
            "one row each: " + "; ".join(rules_applied(merged)))


def _unattributed_note(unattributed: dict, attribution: str, has_graphs: bool) -> str:
    """The kernels launched in no range, and, attributed by thread, how many another thread launched."""
    what = "kernels and graphs" if has_graphs else "kernels"
    other_threads = (f", or ({unattributed['other_thread_kernels']:,} of them) by another thread than the one "
                     "that pushed it, as a framework's worker threads do: try --attribution process"
                     if attribution == THREAD and unattributed.get("other_thread_kernels") else "")
    return (f"in no range: {unattributed['kernels']:,} {what}, {unattributed['kernel_ns'] / 1e3:,.1f} us "
            f"({unattributed['pct']:.0f}% of all kernel time): launched outside every range{other_threads}")


def _fit_ranges(present: list, rows: list[dict], width: int) -> tuple[list, list[dict]]:
    """The columns and rows that fit `width`: range names shortened to the part that tells them
    apart (table_names.telling_names, never cut inside a word) down to RANGE_NAME_MIN characters
    while the copy and op counts are left out (RANGE_DROP_ORDER's first RANGE_SECONDARY), then
    shorter still while the rest of RANGE_DROP_ORDER goes too. Narrower than that, the terminal folds."""
    longest = max((len(row["range"]) for row in rows), default=1)
    rows_for = named_rows(rows, "range", kernels=False)
    first = tuple(w for w in (longest, *RANGE_NAME_WIDTHS) if w <= longest and w >= RANGE_NAME_MIN) or (longest,)
    columns, shown = fit_named(present, rows_for, first, width, RANGE_DROP_ORDER[:RANGE_SECONDARY])
    if table_width(columns, shown) > width:
        columns, shown = fit_named(present, rows_for, (*first, *(w for w in RANGE_NAME_WIDTHS if w < RANGE_NAME_MIN)),
                                   width, RANGE_DROP_ORDER)
    return columns, shown
