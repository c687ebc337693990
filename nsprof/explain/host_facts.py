"""`nsprof explain gpu-idle`: why a program's GPU waits, each number read from its capture
(nsprof.analyze.host_side through the one analysis, which the explain verb opens through the front
door: nsprof.verbs.explain_sources)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from nsprof.analyze.host_verdict import IDLE_CAUSES, busiest
from nsprof.errors import ParseError
from nsprof.explain.explain_types import HostFacts
from nsprof.render.host_tables import figure, per_iteration_ns

if TYPE_CHECKING:
    from nsprof.analyze.capture_analysis import CaptureAnalysis


def host_facts(path: Path, analysis: CaptureAnalysis) -> HostFacts:
    """The host side of the program captured at `path` (nsprof.analyze.host_side's dict), from its
    analysis (the explain verb opens it through the front door: a set of cycles is its first)."""
    from nsprof.render.host_tables import activity_line, loop_lines

    if analysis.host is None:
        raise ParseError(f"{path}: no program's nsys capture with CUDA calls in it (a ladder's capture, or ncu alone)",
                         "pass a program's capture: nsprof profile -- CMD writes one, or an nsys .sqlite or .nsys-rep")
    # the loop, its phases and the host's activity in analyze's own words (one renderer for both)
    return {**analysis.host, "loop": None if analysis.loop is None else analysis.loop.to_json(),
            "phases": [phase.to_json() for phase in analysis.phases],
            "said": [*loop_lines(analysis.loop, analysis.phases), activity_line(analysis.host)]}


def fact_lines(host: HostFacts) -> list[str]:
    """The story in Markdown bullets: the window, the verdict, the loop, its phases and what the host
    did, the idle time by cause, and the fixes (savings per iteration too)."""
    window, verdict = host["window"], host["verdict"]
    device = busiest(host)
    launches = host["launches"]
    said = verdict["verdict"][0].upper() + verdict["verdict"][1:]
    lines = [f"Window: {window['source']}, {window['span_ns'] / 1e6:,.1f} ms.",
             f"**{said}**: GPU {device['device_id']} was busy {device['busy_pct']:.1f}% of it (rule: {verdict['rule']}).",
             f"{launches['count']:,} launches, {figure(launches['per_s'], ',.0f')} a second; the median kernel ran "
             f"{figure(launches['median_kernel_ns'], ',.0f', 1e3)} us and the host spent "
             f"{figure(launches['median_between_ns'], ',.1f', 1e3)} us between launches; the GPU's queue was empty at "
             f"{figure(launches['empty_queue_pct'], '.0f%')} of them.", *host.get("said", ())]
    idle = device["idle_ns"]
    for cause, ns in sorted(device["idle_causes"].items(), key=lambda kv: -kv[1]):
        if ns:
            lines.append(f"Idle {ns / 1e6:,.2f} ms ({100 * ns / idle:.0f}% of idle time), {cause}: {IDLE_CAUSES[cause]}.")
    for fix in host["fixes"][:3]:
        each_ns = per_iteration_ns(host, fix["saving_ns"])
        each = "" if each_ns is None else f", {each_ns / 1e6:,.3f} ms an iteration"
        lines.append(f"Fix {fix['cause']} (saves at most {fix['saving_ns'] / 1e6:,.2f} ms{each}, {fix['bound']}): "
                     f"{fix['fix']}.")
    return lines
