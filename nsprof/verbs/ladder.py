"""`roofline` and `report`: the ladder of the profiles given (or chosen), and the files drawn from it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from nsprof.errors import ParseError
from nsprof.paths import PROFILES_DIR
from nsprof.verbs.common import outside_profiles, path_or_none

if TYPE_CHECKING:  # loaded with the calls that need them: `nsprof --help` stays fast
    from nsprof.ladder_analysis.profiles import LadderAnalysis


ROOFLINE_FILES = ("roofline.png", "roofline.svg", "roofline.csv")


# roofline.csv: what each point is, where it sits, what bounds it, then where it came from.
ROOFLINE_CSV_COLUMNS = ("label", "kernel", "level", "intensity_flop_per_byte", "flops_source", "gflops_per_s",
                        "bound", "pct_of_roof", "roof_gflops_per_s", "roof_source", "compute_roof", "duration_ns",
                        "time_source", "op", "stage", "size", "profile", "launch_plan", "launch_waves", "launch_idle_share")


def load_ladder(paths: Sequence[str | Path] | None = None, keep_all: bool = False,
                ceilings: str | Path | None = None) -> LadderAnalysis:
    """The profiles under `paths` analyzed under the GPU's ceilings; by default each stage and size
    from the latest profile that has it, every profile's with `keep_all`. Without `paths`, one ladder
    on one GPU under profiles/ (nsprof.parse.sources.default_ladder), and `chosen` says which."""
    from nsprof.analyze.capture_facts import gpu_name
    from nsprof.ceilings.resolve import resolve_ceiling
    from nsprof.ladder_analysis.profiles import LadderCapture, analyze_ladder, ladder_gpu
    from nsprof.parse.sources import default_ladder, load_sources, loaded
    from nsprof.profile_analysis import ladder_analysis

    chosen = None
    if paths:
        sources = load_sources([Path(p) for p in paths])
    else:
        found, chosen = default_ladder(PROFILES_DIR)
        sources = loaded(found)
    gpu = ladder_gpu({source.name: gpu_name(source.profile.timelines, source.profile.counters, source.profile.manifest)
                      for source in sources})
    manifests = [source.profile.manifest for source in sources]  # oldest first: the newest's ceilings win
    ceiling = resolve_ceiling(gpu, path_or_none(ceilings), manifests)
    captures = [LadderCapture(source.name, source.started, ladder_analysis(source.profile, ceiling)) for source in sources]
    return replace(analyze_ladder(captures, gpu, ceiling, keep_all), chosen=chosen)


def write_roofline(ladder: LadderAnalysis, out: str | Path, force: bool = False) -> list[Path]:
    """OUT/roofline.png, .svg and .csv, written as a set (see nsprof.output): files nsprof wrote
    there before are replaced, any other file in the way is kept (a UsageError names it) unless
    `force`. Raises ParseError when no kernel has FLOPs, bytes and time."""
    if ladder.points.empty:
        names = ", ".join(capture.name for capture in ladder.captures) or "the profiles given"
        raise ParseError(f"nothing to place on a roofline in {names} (no ncu kernel with FLOP counts, bytes and a duration)",
                         "Profile with `nsprof profile --tool ncu` (or both), or pass an ncu CSV that has "
                         "gpu__time_duration.sum, dram__bytes_read.sum/_write.sum and the FP32 or tensor FLOP counters")

    from nsprof.output import check_outputs, write_set
    from nsprof.render.csv_table import csv_bytes
    from nsprof.render.figure_file import figure_files
    from nsprof.render.roofline import roofline_figure

    outside_profiles(out)
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
    from nsprof.ladder_analysis.untimed import untimed_ladder
    from nsprof.output import check_outputs, write_set

    untimed = untimed_ladder(ladder.work, {capture.name: capture.analysis.untimed_causes for capture in ladder.captures})
    if untimed:
        raise ParseError(f"no stage has a time to report: {untimed}",
                         "Capture the stages with `nsprof profile` (nsys times them), or pass ncu output that has "
                         "gpu__time_duration.sum")
    outside_profiles(directory)
    since = check_outputs([Path(directory) / "index.html", Path(directory) / "report.md"], force)
    title, blocks = report_document(ladder)
    files = {"index.html": to_html(blocks, title).encode(), "report.md": to_markdown(blocks).encode(),
             **{block.file_name: block.png for block in blocks if isinstance(block, Image)}}
    return write_set(Path(directory), files, force, since)


def unplaced_lines(ladder: LadderAnalysis) -> list[str]:
    """One line per piece of work the roofline could not place, or placed at fewer levels, and why."""
    from nsprof.analyze.roofline import unplaced_work, unseen_levels

    def where(row) -> str:
        return row.label + (f" ({row.size})" if isinstance(row.size, str) else "")

    return [*(f"not on the roofline: {where(row)}: {row.reason}"
              for row in unplaced_work(ladder.work, ladder.cpu_roofs).itertuples()),
            *(f"no {row.level} point: {where(row)}: {row.reason}" for row in unseen_levels(ladder.work).itertuples())]
