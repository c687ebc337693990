"""Finding Nsight Systems (`nsys`) and Nsight Compute (`ncu`), and asking them their version.

Precedence: the command-line option (--nsys / --ncu), then the environment variable
(NSPROF_NSYS / NSPROF_NCU), then PATH. Each names an executable path or a command name.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, replace

from nsprof.errors import ToolNotFoundError


@dataclass(frozen=True)
class ToolSpec:
    name: str  # the executable's usual name, also the --tool choice
    product: str
    env_var: str
    option: str


TOOLS = {
    "nsys": ToolSpec("nsys", "Nsight Systems", "NSPROF_NSYS", "--nsys"),
    "ncu": ToolSpec("ncu", "Nsight Compute", "NSPROF_NCU", "--ncu"),
}

# nsys: "NVIDIA Nsight Systems version 2025.3.1.90-253135822008v0";
# ncu: "... Version 2025.3.1.0 (build 36398880) (public-release)" after a copyright line
# whose "2018-2025" has no dot and so does not match.
_VERSION = re.compile(r"\d{4}\.\d+(?:\.\d+)*")


@dataclass(frozen=True)
class FoundTool:
    name: str
    path: str
    found_by: str  # "--ncu", "NSPROF_NCU" or "PATH"
    version: str | None = None  # filled by locate_tool

    def to_json(self) -> dict:
        return {"path": self.path, "version": self.version, "found_by": self.found_by}


def find_tool(name: str, option: str | None = None, environ: Mapping[str, str] | None = None) -> FoundTool:
    """Resolve `name` ("nsys" or "ncu"): option > environment variable > PATH."""
    spec = TOOLS[name]
    environ = os.environ if environ is None else environ
    how_to_point = (f"Install {spec.product} (the CUDA toolkit ships it) or point nsprof at it with "
                    f"{spec.option} /path/to/{name} or {spec.env_var}=/path/to/{name}")
    for value, found_by in ((option, spec.option), (environ.get(spec.env_var), spec.env_var)):
        if value:
            path = shutil.which(value, path=environ.get("PATH"))
            if path is None:
                raise ToolNotFoundError(f"{name} not found: {found_by} names '{value}', which is not an executable",
                                        how_to_point)
            return FoundTool(name, path, found_by)
    path = shutil.which(name, path=environ.get("PATH"))
    if path is None:
        raise ToolNotFoundError(f"{name} ({spec.product}) not found: not on PATH and {spec.env_var} is not set",
                                how_to_point)
    return FoundTool(name, path, "PATH")


def locate_tool(name: str, option: str | None = None, environ: Mapping[str, str] | None = None) -> FoundTool:
    """find_tool, then check that it runs by asking its version."""
    tool = find_tool(name, option, environ)
    return replace(tool, version=tool_version(tool))


def tool_version(tool: FoundTool, timeout_s: float = 30) -> str:
    """The version `<tool> --version` prints (e.g. 2025.3.1.0), or its first line if none is recognised."""
    try:
        done = subprocess.run([tool.path, "--version"], capture_output=True, text=True,
                              timeout=timeout_s, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as err:
        raise ToolNotFoundError(f"{tool.path} --version failed ({type(err).__name__}: {err})",
                                f"check that {tool.path} is a working {TOOLS[tool.name].product} executable") from None
    text = done.stdout + done.stderr
    if done.returncode != 0:
        raise ToolNotFoundError(f"{tool.path} --version exited with code {done.returncode}",
                                f"check that {tool.path} is a working {TOOLS[tool.name].product} executable")
    match = _VERSION.search(text)
    return match.group(0) if match else (text.strip().splitlines() or ["unknown"])[0]
