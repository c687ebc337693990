"""`nsprof analyze`'s first lines for a program's capture: why the GPU waits (the verdict and its
evidence, nsprof.analyze.host_side) and one ranking of what to fix, host and GPU together, each
saving bounded by what it can gain."""

from __future__ import annotations

from typing import Any

import pandas as pd

from nsprof.analyze.host_activity import NO_SAMPLES
from nsprof.analyze.host_types import HostSide
from nsprof.analyze.host_verdict import IDLE_CAUSES
from nsprof.analyze.iterations import FOUND, Loop
from nsprof.analyze.phases import STARTUP, Phase
from nsprof.kernel_names import kernel_label
from nsprof.render.document import Block, Bullets, Paragraph, Table
from nsprof.render.table_names import telling_names
from nsprof.render.terminal_table import fit_named, left_out
from nsprof.shorten import shortened

KERNEL_FIXES = 5  # kernels in the ranking beside the host's causes (the hot-kernel table has the rest)
FIX_COLUMNS = (("#", "rank", "d"), ("what to fix", "label", ""), ("saving\nus", "saving_ns", lambda ns: f"{ns / 1e3:,.0f}"),
               ("us an\niteration", "per_iteration_ns", lambda ns: f"{ns / 1e3:,.1f}"),
               ("% of\nwindow", "pct", ".1f"), ("bounded by", "bound", ""))
FIX_DROP_ORDER = ("pct", "bound", "per_iteration_ns")
LABEL_WIDTHS = (40, 32, 26, 20)
ANCHOR_WIDTH = 48  # of a kernel's name, in the loop's line


def ms(ns: float) -> str:
    return f"{ns / 1e6:,.1f} ms" if ns >= 1e5 else f"{ns / 1e3:,.1f} us"


def verdict_lines(host: HostSide) -> list[str]:
    """The verdict, its evidence and its rule, a line each."""
    verdict, window = host["verdict"], host["window"]
    evidence = verdict["evidence"]
    launches = host["launches"]
    cause = evidence["top_idle_cause"]
    iterations = host.get("iterations")
    per = "" if not iterations or iterations.get("count") is None else f", {iterations['count']:,} steady iterations " + \
        ("of the loop found in the GPU work" if iterations.get("source") == FOUND else f"of {iterations['range']}")
    lines = [f"Verdict: {verdict['verdict']}. GPU {evidence['device_id']} busy {evidence['busy_pct']:.1f}% of "
             f"{ms(window['span_ns'])}{per} (copies {evidence['copy_share_pct']:.0f}% of busy time)."]
    if cause and evidence["idle_ns"]:
        lines.append(f"Idle {ms(evidence['idle_ns'])}, {evidence['top_idle_cause_pct']:.0f}% of it {cause}: "
                     f"{IDLE_CAUSES[cause]}.")
    if launches["count"]:
        lines.append(f"Launches: {launches['count']:,} ({figure(launches['per_s'], ',.0f')}/s), median kernel "
                     f"{_us(launches['median_kernel_ns'])}, host {_us(launches['median_between_ns'])} between launches "
                     f"and {_us(launches['median_call_ns'])} in each; queue empty at "
                     f"{figure(launches['empty_queue_pct'], '.0f%')} of launches; kernel starts "
                     f"{_us(launches['median_to_start_ns'])} after its launch call returns.")
    waits, copies = host["waits"], host["copies"]
    where = waits.get("where") or []
    place = f"in {where[0]['range']}" if where and where[0]["range"] else "outside NVTX ranges"
    thread = where[0]["thread"] if where else ""
    at = f", most on {thread if thread.startswith('an ') else 'thread ' + thread}, {place}" if where else ""
    loading = (f"module loading not traced by {host.get('tool')} (its time reads as host work)"
               if "module loading" in host.get("untraced", ()) else
               f"module loading {host['loading']['count']:,} calls ({ms(host['loading']['host_ns'])})")
    lines.append(f"Waits: {waits['count']:,} ({ms(waits['host_ns'])} blocked{at}); copies: {copies['count']:,}, "
                 f"{copies['pageable_count']:,} pageable; {loading}, allocations {host['allocation']['count']:,}.")
    lines.append(activity_line(host))
    lines.append(f"Window: {window['source']}. Rule: {verdict['rule']}.")
    return lines


def activity_line(host: HostSide) -> str:
    """What the host did in the GPU's idle time (its samples by activity, its waits), or what capture
    gives the samples."""
    activity = host.get("activity")
    if not activity and host.get("tool") not in (None, "nsys"):
        return (f"Host in the GPU's idle time: not sampled; {host['tool']} takes no CPU samples (an nsys capture of "
                "the program holds them).")
    if not activity:
        return f"Host in the GPU's idle time: not sampled; {NO_SAMPLES}."
    shares = ", ".join(f"{row['activity']} {row['pct']:.0f}%" for row in activity["activities"][:4])
    waits = ", ".join(f"{row['call']} {ms(row['host_ns'])}" for row in activity["waits"][:2])
    return (f"Host in the GPU's idle time ({activity['samples']:,} CPU samples of {activity['threads']} launching "
            f"thread{'s' if activity['threads'] > 1 else ''}): {shares}" + (f"; waits: {waits}" if waits else "") + ".")


def loop_lines(loop: Loop | None, phases: tuple[Phase, ...]) -> list[str]:
    """The program's loop and its phases, a line each: what makes an iteration, how long one takes
    and how many are start-up; start-up by where the host's time went; or why no loop was found."""
    if loop is None:
        return []
    iterations = loop.iterations
    if iterations is None:
        return [f"Loop: none found in the GPU work ({loop.not_found}) and no repeating NVTX range: the whole "
                "capture is judged, start-up included."]
    if iterations.source == FOUND:
        what = (f"{iterations.count:,} iterations found in the GPU work ({iterations.confidence} confidence: "
                f"{iterations.regular:,} alike, {iterations.operations:,} GPU operations each, from a launch of "
                f"{shortened(kernel_label(iterations.anchor or ''), ANCHOR_WIDTH)})")
    else:
        check = iterations.check
        found = (f"; found in the GPU work too, {check.found:,} iterations, {check.matched:,} of the marked ones "
                 "holding one" if check else f"; none found in the GPU work ({loop.not_found})" if loop.not_found else "")
        what = f"{iterations.count:,} iterations marked by {iterations.marker}{found}"
    warm = "" if not iterations.steady_from else "; the first is start-up" if iterations.steady_from == 1 else \
        f"; the first {iterations.steady_from:,} are start-up"
    lines = [f"Loop: {what}. Steady state {ms(iterations.median_ns)} an iteration (spread "
             f"{iterations.spread_pct:.0f}%){warm}." + (f" Drift: {iterations.drift}." if iterations.drift else "")]
    lines += [f"Note: {note}." for note in loop.notes]
    spans = [f"{phase.name} {ms(phase.span_ns)} (GPU busy {100 * phase.gpu_busy_ns / phase.span_ns:.0f}%)"
             for phase in phases if phase.span_ns]
    startup = next((phase for phase in phases if phase.name == STARTUP), None)
    if spans:
        parts = "" if startup is None else "; start-up's host time: " + ", ".join(
            f"{part} {ms(ns)}" for part, ns in startup.parts if ns >= startup.span_ns / 100)
        lines.append(f"Phases: {', '.join(spans)}{parts}.")
    return lines


def figure(value, spec: str, per: float = 1.0) -> str:
    """A figure the capture may not give (no launch matched to its kernels): '-' then; else
    value / `per` in `spec`. A spec ending in % is a percentage already (not a fraction)."""
    if value is None:
        return "-"
    return format(value / per, spec[:-1]) + "%" if spec.endswith("%") else format(value / per, spec)


def _us(ns) -> str:
    return "-" if ns is None else f"{ns / 1e3 + 0.0:,.1f} us".replace("-0.0 ", "0.0 ")  # no "-0.0" for a rounded -0.04


def steady_iterations(host: HostSide) -> int | None:
    """How many iterations the host side's window holds (its savings are over them), or None."""
    judged = host["iterations"]
    return judged["count"] or None if judged else None


def per_iteration_ns(host: HostSide, saving_ns: float) -> float | None:
    """A saving over the window as one iteration's share of it (None without iterations)."""
    iterations = steady_iterations(host)
    return saving_ns / iterations if iterations else None


def fix_rows(host: HostSide, hot: pd.DataFrame | None) -> list[dict]:
    """The host's fixes and the kernels with the largest bounded saving, largest saving first."""
    rows: list[dict[str, Any]] = [{"label": fix["cause"], "saving_ns": fix["saving_ns"], "bound": fix["bound"],
                                   "evidence": f"{fix['evidence']}; fix: {fix['fix']}"} for fix in host["fixes"]]
    if hot is not None and "saving_ns" in hot:
        ranked = hot.dropna(subset=["saving_ns"]).sort_values("saving_ns", ascending=False, kind="stable")
        for row in ranked.head(KERNEL_FIXES).itertuples():
            ncu = "" if pd.isna(row.ncu_saving_ns) else f"; ncu's own estimate {row.ncu_saving_ns / 1e3:,.0f} us"
            rows.append({"label": row.kernel, "kernel": True, "saving_ns": float(row.saving_ns),
                         "bound": str(row.saving_bound),
                         "evidence": f"{row.top_rule} (ncu), {row.launches:,} launches{ncu}"})
    span = host["window"]["span_ns"]
    rows = sorted(rows, key=lambda row: -row["saving_ns"])
    for rank, row in enumerate(rows, 1):
        row["rank"], row["pct"] = rank, 100 * row["saving_ns"] / span if span else None
        row["per_iteration_ns"] = per_iteration_ns(host, row["saving_ns"])
    return rows


def host_blocks(host: HostSide, hot: pd.DataFrame | None, width: int, loop: Loop | None = None,
                phases: tuple[Phase, ...] = ()) -> list[Block]:
    """The verdict lines, the loop's, and the one ranking of fixes, `width` columns wide."""
    blocks: list[Block] = [Paragraph(line) for line in (*verdict_lines(host), *loop_lines(loop, phases))]
    rows = fix_rows(host, hot)
    if not rows:
        return blocks
    names = [row["label"] for row in rows]

    def rows_for(name_width: int) -> list[dict]:
        kernel_names = iter(telling_names([name for name, row in zip(names, rows) if row.get("kernel")], name_width))
        return [{**row, "label": next(kernel_names) if row.get("kernel") else row["label"]} for row in rows]

    iterations = steady_iterations(host)
    offered = [column for column in FIX_COLUMNS if iterations or column[1] != "per_iteration_ns"]
    columns, shown = fit_named(offered, rows_for, LABEL_WIDTHS, width, FIX_DROP_ORDER, weighed=2)
    per = f"; us an iteration: the saving over the window's {iterations:,} iterations" if iterations else ""
    caption = ("saving: at most the GPU idle time a host cause made, a pageable copy's time less its bytes at the "
               "pinned rate, or a kernel's time x (1 - its fraction of the nearest roof) and never more than ncu's own "
               f"estimate; savings overlap, so they do not add up{per}; % of window: of the steady state's span")
    table = Table("What to fix first, host and GPU together", tuple(columns), shown, caption,
                  left_out=left_out(offered, columns, shown))
    return [*blocks, table, Bullets([f"{row['rank']}: {row['evidence']}" for row in rows])]
