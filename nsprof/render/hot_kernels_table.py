"""`nsprof analyze`'s and the report's first table: where the time goes and what to fix first
(nsprof.analyze.hot_kernels, nsys and ncu joined per kernel and launch configuration)."""

from __future__ import annotations

import pandas as pd

from nsprof.analyze.harness import NSPROF_HARNESS
from nsprof.analyze.hot_kernels import COVERAGE_PCT, GRAPH_LEVEL, NOT_PROFILED
from nsprof.render import format as fmt
from nsprof.render.document import Table
from nsprof.render.table_names import telling_names
from nsprof.render.terminal_table import fit_named, left_out

HOT_ROWS = 10  # the terminal shows the first ten ranked; --json has every row


def _us(ns) -> str:
    return f"{ns / 1e3:,.1f}"


def _rate(row: dict) -> str | None:
    """TFLOP/s for a kernel whose closest roof is a FLOP peak, GB/s for one closest to DRAM's."""
    if row.get("roof") == "DRAM bandwidth":
        return fmt.bytes_per_s(row["dram_gbytes_per_s"] * 1e9)
    if row.get("roof") is not None:
        return fmt.flops_per_s(row["tflops_per_s"] * 1e12)
    return None


def _speedup(row: dict) -> str | None:
    if row.get("top_rule") is None or pd.isna(row.get("speedup_pct")):
        return None
    return f"{row['speedup_pct']:.0f} {str(row['speedup_type'])[:1]}"


def short_size(config) -> str | None:
    """'(1024, 1, 1)' -> '1024', '(8, 12, 1)' -> '8x12': the grid, short."""
    if not isinstance(config, str):
        return None
    sizes = [part.strip() for part in config.strip("()").split(",")]
    while len(sizes) > 1 and sizes[-1] == "1":
        sizes.pop()
    return "x".join(sizes)


COLUMNS = (("kernel", "label", ""), ("grid", "grid_short", ""), ("operator", "operator", ""), ("launches", "launches", ",d"),
           ("total us", "total_ns", _us), ("% time", "pct", ".1f"), ("bound", "bound", ""),
           ("SM\n%", "sm_throughput_pct", ".0f"), ("mem\n%", "memory_throughput_pct", ".0f"),
           ("occ.\n%", "occupancy_pct", ".0f"), ("rate", "rate", ""), ("% of\nroof", "pct_of_roof", ".0f"),
           ("top rule (ncu)", "top_rule", ""), ("est.\nspeedup %", "speedup", ""), ("saving\nus", "saving_ns", _us))
# Left out first when the terminal is too narrow (every value stays in --json). The grid stays:
# rows of one kernel differ by it; so does the saving they are ranked by. What bounds a kernel
# outlasts the rule ncu names for it: the rule's words are long, "compute" or "memory" short.
DROP_ORDER = ("occupancy_pct", "launches", "speedup", "pct_of_roof", "memory_throughput_pct", "sm_throughput_pct",
              "rate", "top_rule", "operator", "bound")
NCU_COLUMNS = ("bound", "sm_throughput_pct", "memory_throughput_pct", "occupancy_pct", "rate", "pct_of_roof",
               "top_rule", "speedup", "saving_ns")  # empty on every row of a capture without ncu: not shown
# kernel names are shortened past 24 only when the columns above are gone; 28 or 24, whichever keeps more columns
LABEL_WIDTHS = (28, 24, 18, 14, 12)


def harness_note(harness: dict) -> str:
    """What the ranking leaves out as harness work, by rule (nsprof.analyze.harness)."""
    rules = harness.get("rules") or []
    if [rule["rule"] for rule in rules] == [NSPROF_HARNESS] or not rules:
        return f"left out: nsprof's own harness (inputs, reference, checks), {harness['pct']:.0f}% of kernel time"
    found = "; ".join(f"{rule['says']}: {_count(rule)}, {rule['pct']:.0f}%" for rule in rules)
    return (f"left out as harness work, {harness['pct']:.0f}% of kernel time (each kernel and its rule in --json's "
            f"harness): {found}")


def _count(rule: dict) -> str:
    """'N kernels' and 'M configurations of other kernels', as the rule found them."""
    kernels, configurations = len(rule["kernels"]), len(rule.get("configurations", ()))
    parts = [f"{kernels:,} {'kernel' if kernels == 1 else 'kernels'}"] if kernels or not configurations else []
    if configurations:
        parts.append(f"{configurations:,} {'configuration' if configurations == 1 else 'configurations'} of kept kernels")
    return " and ".join(parts)


MEDIAN_COLUMNS = {"bound": "bound", "sm_throughput_pct": "SM", "memory_throughput_pct": "mem",
                  "occupancy_pct": "occ.", "rate": "rate", "pct_of_roof": "% of roof"}


def _ncu_columns_note(columns: list) -> str:
    """What the ncu columns shown are (only those shown: a caption never explains a column left out)."""
    shown = [word for key, word in MEDIAN_COLUMNS.items() if any(column[1] == key for column in columns)]
    if not shown:
        return ""
    said = ", ".join(shown[:-1]) + (" and " if len(shown) > 1 else "") + shown[-1]
    roof = ("; % of roof: of the nearest roof (FP32 or tensor peak, DRAM bandwidth) of the GPU's ceilings"
            if "% of roof" in shown else "")
    return f"; {said}: medians over the launches ncu replayed, as ncu's kernels table names them{roof}"


def hot_kernels_table(hot: pd.DataFrame, width: int, harness: dict | None = None, tool: str = "nsys",
                      rest_in: str = "--json") -> Table:
    """The hot kernels, fitted to `width`; rows past HOT_ROWS are counted, said to be in `rest_in`
    (`nsprof report`, which has no --json, names analyze's)."""
    shown = hot.head(HOT_ROWS)

    def rows_for(label_width: int) -> list[dict]:
        return [{**row, "label": label, "grid_short": short_size(row["grid"]), "rate": _rate(row), "speedup": _speedup(row)}
                for row, label in zip(shown.to_dict("records"), telling_names(shown["kernel"], label_width))]

    profiled = bool((hot["ncu_launches"] > 0).any())
    named = "operator" in hot and hot["operator"].notna().any()  # a torch.profiler trace names who launched them
    wanted = [column for column in COLUMNS if (profiled or column[1] not in NCU_COLUMNS)
              and (named or column[1] != "operator")]
    columns, rows = fit_named(wanted, rows_for, LABEL_WIDTHS, width, DROP_ORDER, weighed=2)
    steady = (harness or {}).get("steady_state")
    ranking = (f"and every one ncu profiled, ranked by saving: {tool}'s total time x ncu's estimated speedup of the top "
               "rule (g: of the whole kernel, l: of the part the rule looks at)" if profiled else
               "ranked by total time (no ncu data, so no ncu columns and no estimated saving)")
    notes = [f"the fewest kernels (name and launch configuration) that make {COVERAGE_PCT:.0f}% of kernel time, {ranking}",
             (f"time and launches: {tool}, every launch of the steady state, " + steady["rule"] if steady else
              f"time and launches: {tool}, every launch") + _ncu_columns_note(columns)]
    unprofiled = int((shown["note"] == NOT_PROFILED).sum())
    if unprofiled:
        notes.append(f"{unprofiled} {'row' if unprofiled == 1 else 'rows'} {NOT_PROFILED} (no ncu columns)")
    if (shown["note"] == GRAPH_LEVEL).any():
        notes.append(f"CUDA graph: {GRAPH_LEVEL}")
    if harness and harness.get("rules"):
        notes.append(harness_note(harness))
    if len(hot) > HOT_ROWS:
        notes.append(f"{len(hot) - HOT_ROWS} more in {rest_in}")
    sources = f"{tool} + ncu" if profiled else f"{tool} only"
    return Table(f"Where the time goes and what to fix first ({sources})", tuple(columns), rows,
                 "; ".join(notes), left_out=left_out(wanted, columns, rows))
