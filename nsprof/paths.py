"""Where nsprof reads and writes by default, shared by every layer (no imports: the command line
names these in its help before any library loads)."""

import re
from pathlib import Path

PROFILES_DIR = Path("profiles")  # the default --from: where `nsprof profile` and `nsprof bench` write
CEILINGS_DIR = PROFILES_DIR  # where `nsprof ceilings` saves and ceilings are looked for by default
REPORTS_DIR = Path("reports")  # where roofline, report and timeline write by default


def gpu_slug(gpu_name: str) -> str:
    """'NVIDIA H200' -> 'nvidia-h200': the GPU's part of a measured ceilings file name."""
    return re.sub(r"[^a-z0-9]+", "-", gpu_name.lower()).strip("-") or "gpu"


def ceilings_file_name(gpu_name: str) -> str:
    return f"ceilings-{gpu_slug(gpu_name)}.json"
