"""An Nsight Systems report (`.nsys-rep`) as the SQLite export nsprof reads.

The .nsys-rep format is nsys's own; its SQLite export is the documented way in. `sqlite_for` returns
the export beside the report (X.nsys-rep -> X.sqlite, where `nsys stats` puts it too), making it with
`nsys export` when nsys is on PATH and the export is missing or older than the report. Without nsys
it raises a ParseError that names the exact command to run where nsys is installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from nsprof.errors import ParseError
from nsprof.output import give_default_mode

EXPORT_TIMEOUT_S = 600


def sqlite_beside(report: Path) -> Path:
    return report.with_suffix(".sqlite")


def export_command(report: Path, output: Path) -> list[str]:
    return ["nsys", "export", "--type", "sqlite", "--force-overwrite", "true", "--output", str(output), str(report)]


def sqlite_for(report: str | Path) -> Path:
    """The SQLite export of `report`, exported now if it is missing or stale."""
    report = Path(report)
    if report.is_file() and report.stat().st_size == 0:
        raise ParseError(f"{report}: empty file, not an Nsight Systems report",
                         "Capture it again with nsys profile (an interrupted nsys or copy leaves such a file)")
    sqlite = sqlite_beside(report)
    if sqlite.is_file() and sqlite.stat().st_mtime >= report.stat().st_mtime:
        return sqlite
    command = export_command(report, sqlite)
    if shutil.which("nsys") is None:
        raise ParseError(f"{report}: reading an .nsys-rep needs Nsight Systems' nsys, which is not on PATH",
                         f"Run `{' '.join(command)}` where nsys is installed, then pass {sqlite.name}")
    # Export to a temporary name and move it into place: an interrupted export leaves no half file.
    try:
        handle, temporary = tempfile.mkstemp(suffix=".sqlite", prefix=f".{report.stem}-", dir=report.parent)
    except OSError as err:
        raise ParseError(f"{report}: cannot write its SQLite export beside it ({err.strerror})",
                         f"Run `{' '.join(export_command(report, Path('OUT.sqlite')))}` and pass OUT.sqlite") from None
    os.close(handle)
    try:
        done = subprocess.run(export_command(report, Path(temporary)), capture_output=True, text=True,
                              timeout=EXPORT_TIMEOUT_S)
        if done.returncode != 0:
            last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no message"]
            raise ParseError(f"{report}: nsys export failed ({last[0]})",
                             f"Check the report opens in Nsight Systems, or run `{' '.join(command)}` yourself")
        give_default_mode(temporary)
        os.replace(temporary, sqlite)
    except subprocess.TimeoutExpired:
        raise ParseError(f"{report}: nsys export took over {EXPORT_TIMEOUT_S} s",
                         f"Run `{' '.join(command)}` yourself, then pass {sqlite.name}") from None
    finally:
        Path(temporary).unlink(missing_ok=True)
    return sqlite
