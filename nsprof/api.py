"""nsprof's public API: what the commands do, callable the same way from a notebook or a script.

    from nsprof import api
    records = api.bench(["v6", "v9"], ["4096"])                 # needs a GPU
    analysis = api.analyze("profiles/examples/h200-sgemm-1024")   # any machine
    ladder = api.load_ladder(["profiles/examples/h200-sgemm-1024"])
    api.write_roofline(ladder, "reports")
    api.write_report(ladder, "reports/h200")

Every function raises nsprof.errors exceptions (with a fix hint) for bad input.
"""

from __future__ import annotations

from pathlib import Path

from nsprof.analyze import ProfileAnalysis, analyze_profile
from nsprof.analyze.ladder import LadderAnalysis, analyze_ladder, sources_gpu
from nsprof.analyze.report import gpu_name
from nsprof.errors import ParseError
from nsprof.parse import load_profile
from nsprof.parse.sources import PROFILES_DIR, load_sources, resolve_ceiling
from nsprof.registry import get_op, select_stages
from nsprof.sizes import parse_sizes

PNG_DPI = 150  # figures are laid out in points; this only sets the PNG's pixel size
# roofline.csv: what each point is, where it sits, what bounds it, then where it came from.
ROOFLINE_CSV_COLUMNS = ("label", "kernel", "level", "intensity_flop_per_byte", "gflops_per_s", "bound", "pct_of_roof",
                        "roof_gflops_per_s", "roof_source", "compute_roof", "duration_ns", "op", "stage", "size",
                        "profile")


def bench(stages: list[str] | None = None, sizes: list[str] | None = None, op: str = "sgemm", **options) -> list[dict]:
    """Verify, then time, each stage at each size (GPU); one record per stage and size.

    `options` are nsprof.launch.bench.run_bench's: repeat, warmup, baseline, tile, progress."""
    from nsprof.launch.bench import check_tile, run_bench

    chosen = select_stages(op, stages)
    check_tile(chosen, options.get("tile"))
    return run_bench(op, chosen, parse_sizes(sizes, get_op(op).dims), **options)


def analyze(path: str | Path, ceilings: str | Path | None = None, attribution: str = "thread") -> ProfileAnalysis:
    """A profile directory or one nsys or ncu file: ranges, kernels and stages, with % of peak
    against the GPU's ceilings (measured where saved, see nsprof.parse.sources.resolve_ceiling).
    `attribution` ("thread" or "process") says whose CUDA calls an NVTX range counts
    (nsprof.analyze.nvtx_attribution)."""
    profile = load_profile(Path(path))
    ceiling = resolve_ceiling(gpu_name(profile.nsys, profile.ncu, profile.manifest), _path(ceilings))
    return analyze_profile(profile.nsys, profile.ncu, profile.manifest, ceiling, attribution)


def load_ladder(paths: list[str | Path] | None = None, keep_all: bool = False,
                ceilings: str | Path | None = None) -> LadderAnalysis:
    """The profiles under `paths` (default profiles/) analyzed under the GPU's ceilings; by default
    each stage and size from the latest profile that has it, every profile's with `keep_all`."""
    sources = load_sources([Path(p) for p in paths] if paths else [PROFILES_DIR])
    gpu = sources_gpu(sources)
    return analyze_ladder(sources, gpu, resolve_ceiling(gpu, _path(ceilings)), keep_all)


def write_roofline(ladder: LadderAnalysis, out: str | Path) -> list[Path]:
    """OUT/roofline.png, .svg and .csv. Raises ParseError when no kernel has FLOPs, bytes and time."""
    if ladder.points.empty:
        names = ", ".join(source.name for source in ladder.sources) or "the profiles given"
        raise ParseError(f"nothing to place on a roofline in {names} (no ncu kernel with FLOP counts, bytes and a duration)",
                         "Profile with `nsprof profile --tool ncu` (or both), or pass an ncu CSV that has "
                         "gpu__time_duration.sum, dram__bytes_read.sum/_write.sum and the FP32 or tensor FLOP counters")
    import matplotlib.pyplot as plt  # matplotlib loads only for the calls that draw

    from nsprof.render.roofline import roofline_figure

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    figure = roofline_figure(ladder.points, ladder.roofs, ladder.gpu)
    paths = [out / "roofline.png", out / "roofline.svg", out / "roofline.csv"]
    figure.savefig(paths[0], dpi=PNG_DPI)
    figure.savefig(paths[1])
    plt.close(figure)
    ladder.points[list(ROOFLINE_CSV_COLUMNS)].to_csv(paths[2], index=False, float_format="%.6g")
    return paths


def write_report(ladder: LadderAnalysis, directory: str | Path) -> list[Path]:
    """DIRECTORY/index.html (self-contained), report.md and the PNG files report.md shows."""
    from nsprof.render.document import Image, to_html, to_markdown  # matplotlib loads only for the calls that draw
    from nsprof.render.report import report_document

    if ladder.work.empty and not ladder.timelines:
        raise ParseError("nothing to report: no stage, kernel or CUDA activity in the profiles given",
                         "Capture one with `nsprof profile`, or pass a profile directory or an ncu .csv file with --from")
    title, blocks = report_document(ladder)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / "index.html", directory / "report.md"]
    paths[0].write_text(to_html(blocks, title), encoding="utf-8")
    paths[1].write_text(to_markdown(blocks), encoding="utf-8")
    for image in (block for block in blocks if isinstance(block, Image)):
        paths.append(directory / image.file_name)
        paths[-1].write_bytes(image.png)
    return paths


def _path(value: str | Path | None) -> Path | None:
    return None if value is None else Path(value)
