"""`nsprof explain pipeline`: why the whole flow of a GPU computation takes the time it does, each
number read from an nsys capture (the user's, or the committed H200 capture of `nsprof pipeline`,
as nsprof.verbs.explain_sources finds and opens it)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from nsprof.analyze.pipeline import fastest_flow
from nsprof.errors import ParseError
from nsprof.explain.explain_types import PipelineFacts

if TYPE_CHECKING:
    from nsprof.analyze.capture_analysis import CaptureAnalysis
    from nsprof.parse.profile import Capture

def pipeline_facts(path: Path, profile: Capture, analysis: CaptureAnalysis) -> PipelineFacts:
    """Copy rates by direction and host-memory kind, how much copies overlapped each other and the
    kernels, and (for an `nsprof pipeline` capture) each variant against the bus floor
    (the capture's analysis: CaptureAnalysis.copies; nsprof.analyze.pipeline.fastest_flow)."""
    if analysis.copies is None:
        raise ParseError(f"{path}: no nsys capture in it", "pass an nsys .nsys-rep or .sqlite, or a profile directory with one")
    return {"source": str(path), **analysis.copies, "pipeline": fastest_flow(profile.pipeline)}


def fact_lines(facts: PipelineFacts) -> list[str]:
    """The facts as sentences with their numbers."""
    lines = []
    by = {(r["direction"], r["host_memory"]): r for r in facts["copy_rates"]}
    for direction in ("Host-to-Device", "Device-to-Host"):
        pageable, pinned = by.get((direction, "pageable")), by.get((direction, "pinned or device"))
        if pageable and pinned:
            lines.append(f"{direction}: pageable copies ran at {pageable['gbytes_per_s']:.1f} GB/s, pinned ones at "
                         f"{pinned['gbytes_per_s']:.1f} GB/s ({pinned['gbytes_per_s'] / pageable['gbytes_per_s']:.1f}x).")
        elif one := pinned or pageable:
            lines.append(f"{direction}: {one['copies']:,} copies from {one['host_memory']} memory "
                         f"at {one['gbytes_per_s']:.1f} GB/s.")
    lines.append(f"GPU time: {facts['h2d_ms']:.3f} ms copying in, {facts['kernel_ms']:.3f} ms in kernels, "
                 f"{facts['d2h_ms']:.3f} ms "
                 f"copying out; both directions ran at once for {facts['both_directions_at_once_ms']:.3f} ms and copies ran "
                 f"during kernels for {facts['copies_during_kernels_ms']:.3f} ms.")
    run = facts["pipeline"]
    if run:
        best, floor = run["best"], run["floor"]
        line = (f"`nsprof pipeline` at {run['size']}: the fastest variant, {best['stage']} {best['variant']}, took "
                f"{best['median_ms']:.3f} ms (median, CUDA events around each flow)")
        if floor and floor.get("floor_ms"):  # as the capture's pipeline.json has it
            line += (f", {best['median_ms'] / floor['floor_ms']:.2f}x the bus floor of {floor['floor_ms']:.3f} ms "
                     f"({floor['h2d_gbyte_per_s']:.1f} GB/s in, {floor['d2h_gbyte_per_s']:.1f} GB/s out, pinned)")
        if run["pageable"]:
            line += f"; the tutorial's pageable flow took {run['pageable']['median_ms']:.3f} ms"
        lines.append(line + ".")
    return lines
