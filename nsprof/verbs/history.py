"""`history`: performance across commits in an SQLite database, and one series' trend chart."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from nsprof.errors import UsageError
from nsprof.verbs.common import history_path, outside_profiles
from nsprof.verbs.diff import diff_side

if TYPE_CHECKING:  # loaded with the calls that need them: `nsprof --help` stays fast
    import pandas as pd




def history_add(paths: Sequence[str | Path], db: str | Path | None = None, commit: str | None = None,
                branch: str | None = None, attribution: str = "thread") -> list[dict]:
    """Add each bench record or capture to the history (nsprof.history.summary), all or none:
    every one is read before the first is added. Returns {"entry", "source", "measurements"} each."""
    from nsprof.history.store import add_entry, opened
    from nsprof.history.summary import git_fields, now, summarize

    _outside_nsprof_profiles(history_path(db).parent)
    summaries = []
    for path in map(Path, paths):
        side = diff_side(path, attribution)
        if side.bench is None and len(gpus := side.gpus()) > 1:
            raise UsageError(f"{path}: its runs ran on {len(gpus)} kinds of GPU ({', '.join(gpus)}): a history entry is "
                             "one GPU's", "add each GPU's runs as an entry of its own")
        entry, found = summarize(path, side, attribution)
        if not found:
            raise UsageError(f"{path}: nothing measured to add (no timed stage, kernel or range)",
                             "add a bench record (nsprof bench --save-as) or an nsys capture")
        summaries.append((path, entry, found))
    fields = {**git_fields(commit, branch), "added": now()}
    with opened(history_path(db), create=True) as conn:
        return [{"entry": add_entry(conn, {**entry, **fields}, found), "source": str(path), "measurements": len(found)}
                for path, entry, found in summaries]


def history(db: str | Path | None = None) -> pd.DataFrame:
    """Every measurement of the history with its entry's fields, oldest first (nsprof.history.store)."""
    from nsprof.history.store import measurements, opened

    with opened(history_path(db)) as conn:
        return measurements(conn)


def write_history_chart(kind: str, name: str, series: pd.DataFrame, out: str | Path, force: bool = False) -> list[Path]:
    """OUT/history-<name>.png: one series' trend (nsprof.render.history.trend_png)."""
    import re

    from nsprof.output import check_outputs, write_set
    from nsprof.render.history import trend_png

    target = Path(out) / f"history-{re.sub(r'[^A-Za-z0-9._-]+', '-', name).strip('-')[:80] or kind}.png"
    outside_profiles(target.parent)
    since = check_outputs([target], force)
    return write_set(target.parent, {target.name: trend_png(kind, name, series)}, force, since)


def _outside_nsprof_profiles(directory: Path) -> None:
    """Refuse a database inside a profile that nsprof wrote (a manifest in it or above it): a capture
    is evidence and keeps only what the tools wrote. Beside captures of the user's own (a CI job's
    directory of runs) it may lie: it is never taken for one of them (nsprof.parse.nsys_sqlite.may_be_export)."""
    from nsprof.parse.profile import nsprof_profile_around

    directory = Path(directory).absolute()
    if (profile := nsprof_profile_around(directory)) is not None:
        raise UsageError(f"{directory} is inside the profile {profile}: nsprof writes nothing into a profile",
                         "keep the database elsewhere: --db history.sqlite, say")
