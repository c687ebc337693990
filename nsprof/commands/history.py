"""`nsprof history add | show | check`: performance across commits, in an SQLite database."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from nsprof import api
from nsprof.console import error_line, stdout
from nsprof.errors import NOTHING_COMPARED_EXIT_CODE, UsageError
from nsprof.paths import DATA_DIR_ENV

DB_HELP = (f"The history database. Default: history.sqlite in nsprof's data directory (${DATA_DIR_ENV} if set, else "
           "~/.local/share/nsprof on Linux); in CI, a path the job caches.")

history_app = typer.Typer(
    name="history", no_args_is_help=True,
    help="Keep what each commit measured (bench records, captures) and find the regressions: add, show, check.")


def add(
    paths: list[Path] = typer.Argument(..., metavar="PATH...", help="`nsprof bench` records (.json, with --runs or "
                                                                   "not) or nsys captures (a profile, with its runs)."),
    db: Path | None = typer.Option(None, "--db", metavar="PATH", help=DB_HELP),
    commit: str | None = typer.Option(None, "--commit", help="The commit measured. Default: git's HEAD here."),
    branch: str | None = typer.Option(None, "--branch", help="Its branch. Default: git's current branch here."),
) -> None:
    """Add each record or capture as one entry: the median of every run per stage, kernel (by
    family) and range, keyed by commit, branch, GPU, driver, CUDA and tool versions and time.
    All or none: every path is read before the first is added."""
    added = api.history_add(paths, db, commit, branch)
    path = api.history_path(db)
    for item in added:
        typer.echo(f"added entry {item['entry']}: {item['measurements']} measurements of {item['source']} to {path}")


def show(
    db: Path | None = typer.Option(None, "--db", metavar="PATH", help=DB_HELP),
    name: str | None = typer.Option(None, "--name", metavar="TEXT",
                                    help="One stage, kernel or range (a part of its name that picks one): every "
                                         "entry of it, and its trend chart."),
    out: Path = typer.Option(Path("reports"), "--out", metavar="DIR",
                             help="With --name: where history-<name>.png is written."),
    as_json: bool = typer.Option(False, "--json", help="Print every measurement as JSON instead of tables."),
    force: bool = typer.Option(False, "--force", help="Also replace a chart in the way that nsprof did not write."),
) -> None:
    """A table of every stage, kernel and range in the history (first and newest median, level
    shifts); with --name, that one entry by entry, and its trend chart with the level shifts
    found by a stated rule (Welch's t on the logs of the medians around each entry)."""
    from nsprof.render.document_writers import to_terminal
    from nsprof.render.history import entry_blocks, series_blocks

    history = api.history(db)
    if as_json:
        typer.echo(history.to_json(orient="records", indent=2))
        return
    if name is None:
        to_terminal(series_blocks(history), stdout())
        return
    (kind, label), series = _one_series(history, name)
    to_terminal(entry_blocks(kind, label, series), stdout())
    for path in api.write_history_chart(kind, label, series, out, force):
        typer.echo(f"wrote {path}", err=True)  # whole, never wrapped: a path is copied from it


def check(
    fail_if_slower: float = typer.Option(..., "--fail-if-slower", metavar="PCT", min=0,
                                         help="Exit 1 when a stage, kernel or range of the newest entry is slower than "
                                              "its baseline by more than PCT percent (its 95% interval above 0)."),
    db: Path | None = typer.Option(None, "--db", metavar="PATH", help=DB_HELP),
    baseline: int = typer.Option(5, "--baseline", metavar="N", min=1,
                                 help="How many entries before the newest (same GPU, same kind) make the baseline."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON instead of a table."),
    first_passes: bool = typer.Option(False, "--first-passes",
                                      help="Pass (exit 0) when the newest entry is the first of its GPU and kind: it "
                                           "becomes the baseline. For CI, whose first push has none."),
) -> None:
    """Compare the newest entry with the entries before it under the statistics `nsprof diff` uses
    across runs, and fail naming each regression. Comparing nothing (no baseline, nothing in
    common) is a failure of its own, exit code 4, never a pass; with --first-passes, the first
    entry of its GPU and kind passes."""
    from nsprof.history.trend import CheckDocument
    from nsprof.history.trend import check as compare
    from nsprof.render import format as fmt
    from nsprof.render.document_writers import to_terminal
    from nsprof.render.history import check_blocks

    history = api.history(db)
    if history.empty:  # what a first add that failed leaves: nothing to compare, as with no baseline
        error_line(f"{api.history_path(db)} holds no entries yet: nothing to compare. Add one first: nsprof history add "
                   "RECORD" + (f" --db {db}" if db is not None else ""))
        raise typer.Exit(NOTHING_COMPARED_EXIT_CODE)
    stats, info = compare(history, fail_if_slower, baseline)
    if stats.empty and first_passes and not info["baseline"]:
        typer.echo(f"entry {info['newest']} is the first on {info['gpu']} of kind {info['kind']}: nothing to compare "
                   "yet; it is the baseline of the next")
        return
    if stats.empty:
        error_line(f"entry {info['newest']} has no baseline to compare with ({len(info['baseline'])} earlier entries "
                   f"on {info['gpu']} of kind {info['kind']}, nothing measured in common). Add the baseline's records "
                   "first, on the same GPU")
        raise typer.Exit(NOTHING_COMPARED_EXIT_CODE)
    if as_json:
        document: CheckDocument = {**info, "rows": json.loads(stats.reset_index(names="key").to_json(orient="records"))}
        typer.echo(json.dumps(document, indent=2))
    else:
        to_terminal(check_blocks(stats, info, fail_if_slower), stdout())
    slower = stats[stats["status"] == "slower"]
    for key, row in slower.iterrows():
        typer.echo(f"slower by more than {fail_if_slower:g}%: {key}: {fmt.change(row['change_pct'])} "
                   f"[{fmt.change(row['ci_low_pct'])}, {fmt.change(row['ci_high_pct'])}]", err=True)
    if len(slower):
        raise typer.Exit(1)


def _one_series(history, name: str):
    """The one series whose name holds `name` (exactly equal wins); UsageError when none or many do."""
    keys = history[["kind", "name"]].drop_duplicates()
    exact = keys[keys["name"] == name]
    found = exact if len(exact) else keys[keys["name"].str.contains(name, regex=False)]
    if len(found) != 1:
        listed = ", ".join(found["name"].head(5)) if len(found) else "none"
        raise UsageError(f"--name {name!r} matches {len(found)} stages, kernels and ranges ({listed})",
                         "give more of the name (nsprof history show lists them)")
    kind, label = found.iloc[0]
    series = history[(history["kind"] == kind) & (history["name"] == label)].reset_index(drop=True)
    return (kind, label), series

