"""The profile directory: one per `nsprof profile` run, named for what it holds and when."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

from nsprof.capture.program import ProgramRequest
from nsprof.capture.request import ProfileRequest
from nsprof.errors import NsprofError
from nsprof.sizes import short_size


def timestamp() -> str:
    return dt.datetime.now().strftime("%Y%m%d-%H%M%S")


def directory_name(request: ProfileRequest | ProgramRequest, stamp: str) -> str:
    """sgemm-v1-v6-4096-20261121-010203; "all" for the whole ladder; MxNxK for non-square sizes;
    a program's: train-20261121-010203 (its script or executable)."""
    if isinstance(request, ProgramRequest):
        return f"{request.name}-{stamp}"
    stages = "all" if request.all_stages else "-".join(s.stage for s in request.stages)
    sizes = "-".join(short_size(s) for s in request.sizes)
    return f"{request.op}-{stages}-{sizes}-{stamp}"


def create_directory(path: Path, force: bool = False) -> Path:
    """Create `path`; an existing one is an error unless `force`, which empties it first."""
    if path.exists() or path.is_symlink():
        if not force:
            raise NsprofError(f"profile directory {path} already exists",
                              "pass --force to replace it, or choose another --out")
        if not path.is_dir() or path.is_symlink():
            raise NsprofError(f"{path} exists and is not a directory", "remove it or choose another --out")
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path
