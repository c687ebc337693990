"""The OUT argument of roofline and report, read as the user meant it."""

from __future__ import annotations

from pathlib import Path

import typer

from nsprof.errors import UsageError
from nsprof.paths import REPORTS_DIR


def output_and_inputs(out: Path, from_: list[Path] | None) -> tuple[Path, list[Path] | None]:
    """(OUT, --from): a profile given as OUT (by analogy with `nsprof analyze PATH`) is read as
    --from, and the output goes to the default directory, said on stderr; nothing is ever written
    into a profile."""
    from nsprof.parse.profile import is_profile

    if not is_profile(out):
        return out, from_
    if from_:
        raise UsageError(f"{out} is a profile, not an output directory (nsprof writes nothing into a profile)",
                         f"give an output directory as OUT, or leave it out for {REPORTS_DIR}/")
    typer.echo(f"{out} is a profile: reading it as --from and writing into {REPORTS_DIR}/", err=True)
    return REPORTS_DIR, [out]
