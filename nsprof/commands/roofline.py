"""`nsprof roofline [OUT]`: roofline.png, .svg and .csv of profiled stages or of any ncu CSV."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from nsprof.analyze.ladder import LadderAnalysis, analyze_ladder, sources_gpu
from nsprof.errors import ParseError
from nsprof.parse.sources import CEILINGS_DIR, PROFILES_DIR, load_sources, resolve_ceiling

PNG_DPI = 150  # the figure is laid out in points; this only sets the PNG's pixel size
# The CSV: what each point is, where it sits, what bounds it, then where it came from.
CSV_COLUMNS = ("label", "kernel", "level", "intensity_flop_per_byte", "gflops_per_s", "bound", "pct_of_roof",
               "roof_gflops_per_s", "roof_source", "compute_roof", "duration_ns", "op", "stage", "size", "profile")

FROM_HELP = ("A profile directory, a directory holding them (searched at any depth), or an ncu .csv file; "
             f"repeatable. Default: {PROFILES_DIR}/.")
ALL_HELP = "Use every profile's stages; by default each stage (and size) comes from the latest profile that has it."
CEILINGS_HELP = ("Measured ceilings: a file saved by `nsprof ceilings`, or the directory holding ceilings-<gpu>.json. "
                 f"Default: {CEILINGS_DIR}/. Values not measured come from the datasheet.")


def roofline(
    out: Path = typer.Argument(Path("reports"), metavar="OUT", help="Directory to write roofline.png, roofline.svg and roofline.csv into."),
    from_: Optional[List[Path]] = typer.Option(None, "--from", metavar="PATH", help=FROM_HELP),
    all_: bool = typer.Option(False, "--all", help=ALL_HELP),
    ceilings: Optional[Path] = typer.Option(None, "--ceilings", metavar="PATH", help=CEILINGS_HELP),
) -> None:
    """Draw the roofline of profiled stages, or of every kernel in an ncu CSV.

    One point per stage and memory level (DRAM, and L2 and L1 when their bytes were collected)
    under the GPU's roofs, with the ladder's path from v1 to v10; and a CSV with each point's
    bound (memory or compute) and % of the roof above it."""
    ladder = load_ladder(from_, all_, ceilings)
    for path in write_roofline(ladder, out):
        typer.echo(f"wrote {path}")


def load_ladder(paths: list[Path] | None, keep_all: bool, ceilings: Path | None) -> LadderAnalysis:
    """The profiles under `paths` analyzed under the GPU's ceilings (measured where saved)."""
    sources = load_sources(paths or [PROFILES_DIR])
    gpu = sources_gpu(sources)
    return analyze_ladder(sources, gpu, resolve_ceiling(gpu, ceilings), keep_all)


def write_roofline(ladder: LadderAnalysis, out: Path) -> list[Path]:
    """OUT/roofline.png, .svg and .csv. Raises ParseError when no kernel has FLOPs, bytes and time."""
    if ladder.points.empty:
        names = ", ".join(source.name for source in ladder.sources) or "the profiles given"
        raise ParseError(f"nothing to place on a roofline in {names} (no ncu kernel with FLOP counts, bytes and a duration)",
                         "Profile with `nsprof profile --tool ncu` (or both), or pass an ncu CSV that has "
                         "gpu__time_duration.sum, dram__bytes_read.sum/_write.sum and the FP32 or tensor FLOP counters")
    import matplotlib.pyplot as plt  # matplotlib loads only for the commands that draw

    from nsprof.render.roofline import roofline_figure

    out.mkdir(parents=True, exist_ok=True)
    figure = roofline_figure(ladder.points, ladder.roofs, ladder.gpu)
    paths = [out / "roofline.png", out / "roofline.svg", out / "roofline.csv"]
    figure.savefig(paths[0], dpi=PNG_DPI)
    figure.savefig(paths[1])
    plt.close(figure)
    ladder.points[list(CSV_COLUMNS)].to_csv(paths[2], index=False, float_format="%.6g")
    return paths
