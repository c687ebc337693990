"""`diff` and `noise`: the two sides of a diff read as captures with their runs, the floors a diff
calls changes beyond, and a user's own noise record measured and kept."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from nsprof.errors import UsageError
from nsprof.verbs.common import history_path, outside_profiles

if TYPE_CHECKING:  # loaded with the calls that need them: `nsprof --help` stays fast
    from nsprof.diff import DiffResult, Side
    from nsprof.diff.noise import NoiseFloor
    from nsprof.diff.types import NoiseDocument


def diff(a: str | Path, b: str | Path | None = None, stages: tuple[str, str] | None = None,
         min_change_pct: float = 2.0, attribution: str = "thread", noise: str | Path | None = None) -> DiffResult:
    """`nsprof diff`: two sides, each a capture (a profile directory, an nsys or ncu file, an
    `nsprof bench` record) or several runs of one program (a profile taken with --runs, a directory
    of nsys captures, a `bench --runs` record); or with `stages` (X, Y) stage X of A against stage
    Y of B (B defaults to A). `noise`: the floors of a one-run diff, a noise record or runs of an
    unchanged program (default: nsprof's own). Returns nsprof.diff.DiffResult."""
    from nsprof.diff import diff_captures

    if b is None and stages is None:
        raise UsageError("diff needs two captures, or one with --stages X,Y", "nsprof diff A B, or nsprof diff A --stages v5,v6")
    sides = [diff_side(Path(a), attribution), diff_side(Path(b if b is not None else a), attribution)]
    floors = noise_floor(Path(noise), attribution, _side_gpu(sides[0])) if noise is not None else None
    return diff_captures(sides[0], sides[1], min_change_pct=min_change_pct, stage_pair=stages, attribution=attribution,
                         noise=floors)


def diff_side(path: Path, attribution: str = "thread") -> Side:
    """One side of a diff (nsprof.diff.Side), from the captures at `path`
    (nsprof.parse.captures.open_captures): a bench record, or a capture with its further runs (a
    profile taken with --runs, a directory of nsys captures as the runs of one program)."""
    from nsprof.diff import Side
    from nsprof.parse.captures import BENCH, open_captures
    from nsprof.profile_analysis import diff_analysis

    def analyzed(name: str, file: Path) -> Side:  # the parts of its analysis a diff compares, nothing else
        return Side(name, diff_analysis(file, attribution))

    captures = open_captures(path)
    if captures.kind == BENCH:
        return Side(str(path), bench=captures.bench_record())
    return _with_runs(analyzed(str(path), captures.first), tuple(analyzed(str(file), file) for file in captures.further))


def _with_runs(capture: Side, runs: tuple[Side, ...]) -> Side:
    """`capture` with its further runs (itself where there are none)."""
    from dataclasses import replace

    return replace(capture, runs=runs) if runs else capture




def _side_gpu(side) -> str | None:
    """The GPU a diff side ran on: its capture's, or its bench record's."""
    if side.bench is not None:
        env = side.bench.get("env")
        return env.get("gpu") if isinstance(env, dict) else None
    return side.analyzed().gpu


def measure_noise_record(paths: Sequence[str | Path], out: str | Path, attribution: str = "thread",
                         force: bool = False, db: str | Path | None = None) -> NoiseDocument:
    """`nsprof noise`: the noise floors of one unchanged program from its runs, written as a noise
    record at `out` (what `diff --noise` reads) and, with `db`, kept in that history database as its
    GPU's record. Each path is a profile with runs, a directory of captures, or one capture; together
    they are the program's runs, all on one GPU. Returns the record, with `written` (the files)."""
    import json

    from nsprof.diff import run_frames
    from nsprof.diff.noise import measure_noise, noise_document
    from nsprof.history.summary import now
    from nsprof.output import check_outputs, write_outputs

    target = Path(out)
    if target.suffix.lower() != ".json":
        raise UsageError(f"--out {target}: a noise record is JSON", "name the file with .json, e.g. --out noise.json")
    outside_profiles(target.parent)
    if db is not None:
        outside_profiles(history_path(db).parent)
    since = check_outputs([target], force)
    sides = [diff_side(Path(path), attribution) for path in paths]
    runs = [run for side in sides for run in (side, *side.runs)]
    if any(run.bench is not None for run in runs):
        raise UsageError("nsprof noise reads captures, not bench records (their runs are in the record)",
                         "pass profiles taken with --runs, or directories of nsys captures")
    gpus = sorted({gpu for side in sides for gpu in side.gpus()})
    if len(gpus) > 1:
        raise UsageError(f"the runs come from {len(gpus)} GPUs ({', '.join(gpus)}): a noise floor is one GPU's",
                         "measure each GPU's floors from its own runs")
    names = ", ".join(str(path) for path in paths)
    if len(runs) < 2:  # before any run is read for its frames
        raise UsageError(f"{names}: one run of the program, and a noise floor needs two or more",
                         "capture the unchanged program with `nsprof profile --runs 5`, or pass several captures of it")
    frames = [frame for side in sides for frame in run_frames(side, attribution)]
    floor = measure_noise(frames, f"measured by nsprof noise on {len(frames)} runs of {names}")
    record = noise_document(floor, len(frames), gpus[0], now())
    written = write_outputs({target: (json.dumps(record, indent=2) + "\n").encode()}, force, since)
    if db is not None:
        from nsprof.history.store import opened, store_noise

        with opened(history_path(db), create=True) as conn:
            store_noise(conn, record)
        written.append(history_path(db))
    return {**record, "written": [str(path) for path in written]}


def noise_floor(path: Path, attribution: str = "thread", gpu: str | None = None) -> NoiseFloor:
    """The noise floors in `path`: a noise record (.json), a history database's record for `gpu`
    (nsprof noise --db), or measured from the runs of an unchanged program (a profile with runs, a
    directory of captures)."""
    from dataclasses import replace

    from nsprof.diff import UNNAMED_GPU, run_frames
    from nsprof.diff.noise import measure_noise, noise_from_document, noise_record
    from nsprof.history.store import is_history, noise_records, opened
    from nsprof.paths import special_file_reason

    if path.suffix.lower() == ".json" or special_file_reason(path):  # what is no file is refused there, unread
        return noise_record(path)
    if is_history(path):
        with opened(path) as conn:
            records = noise_records(conn)
        name = gpu or UNNAMED_GPU
        if name not in records:
            held = f" (it holds {', '.join(records)})" if records else ""
            raise UsageError(f"{path}: no noise record for {name}{held}",
                             f"record one from unchanged runs on it: nsprof noise RUNS... --out noise.json --db {path}")
        return noise_from_document(records[name], f"{path}, {name}'s noise record")
    side = diff_side(path, attribution)
    gpus = side.gpus()
    if len(gpus) > 1:  # a floor is one kind of GPU's: pooled, it says how far another machine moves work
        raise UsageError(f"--noise {path}: the runs come from {len(gpus)} GPUs ({', '.join(gpus)}): a noise floor is one "
                         "GPU's", "pass runs of one GPU")
    return replace(measure_noise(run_frames(side, attribution), f"measured on {path}"),
                   gpu=None if gpus == [UNNAMED_GPU] else gpus[0])


def write_diff(result, directory: str | Path, force: bool = False) -> list[Path]:
    """DIRECTORY/index.html (self-contained), diff.md and the chart diff.md shows, written as a set
    (see nsprof.output): an earlier diff nsprof wrote there is replaced, any other file in the way
    is kept unless `force`."""
    from nsprof.output import check_outputs, write_set
    from nsprof.render.diff_chart import diff_chart
    from nsprof.render.diff_tables import CHART_FILE, diff_blocks, diff_title
    from nsprof.render.document import REPORT_WIDTH
    from nsprof.render.document_writers import to_html, to_markdown
    from nsprof.render.figure_file import figure_bytes

    outside_profiles(directory)
    since = check_outputs([Path(directory) / name for name in ("index.html", "diff.md", CHART_FILE)], force)
    rows, label = (result.kernels, "kernel") if result.kernels else (result.stages, "stage")
    png = figure_bytes(diff_chart(rows, label, diff_title(result)))
    blocks = diff_blocks(result, REPORT_WIDTH, png)
    files = {"index.html": to_html(blocks, diff_title(result)).encode(),
             "diff.md": to_markdown(blocks).encode(), CHART_FILE: png}
    return write_set(Path(directory), files, force, since)
