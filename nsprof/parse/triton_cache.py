"""What Triton kept of the kernels a program compiled: its cache directory (TRITON_CACHE_DIR), one
folder per compiled kernel holding `<name>.json` (the metadata: name, num_warps, num_stages,
shared memory in bytes, target) beside the kernel's IRs, whose `loc("file.py":line:col)` entries name
the Python source of the @triton.jit function. `nsprof profile -- CMD` points the program's Triton at
the profile's own `triton-cache/` (nsprof.capture.program.triton_cache).

A profile's Triton kernels are then told apart by what Triton compiled, not only by their grid:
the launch's block is num_warps x 32 threads and its dynamic shared memory is the metadata's
`shared`, so (name, block, shared memory) finds a compiled kernel (nsprof.analyze.triton_kernels).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from nsprof.errors import ParseError
from nsprof.parse.json_document import read_json_object
from nsprof.printable import printable

TRITON_KERNEL_COLUMNS = ("kernel", "num_warps", "num_stages", "shared_bytes", "source", "hash")
_LOC = re.compile(r'loc\("([^"]+\.py)":(\d+):\d+\)')
_IRS = (".ttir", ".source", ".ttgir")  # the first that names a Python file gives the source
MAX_METADATA_BYTES = 1 << 20  # a kernel's metadata is a few kilobytes: a larger .json is something else
IR_HEAD_BYTES = 1 << 20  # how much of an IR is searched for its first Python location


def load_triton_cache(directory: Path) -> pd.DataFrame:
    """One row per compiled kernel under `directory` (TRITON_KERNEL_COLUMNS; `source`: "file.py:line"
    of the jitted function, None where no IR names it). Files that are not Triton's kernel metadata
    (its group files, other JSON) are passed over; an empty frame where there is none."""
    rows = []
    for path in sorted(Path(directory).glob("*/*.json")):
        try:  # the one guarded reader: no FIFO, no /dev/zero, no file past a metadata file's size
            metadata = read_json_object(path, "Triton kernel's metadata", "", MAX_METADATA_BYTES)
        except (ParseError, OSError):
            continue
        if not {"name", "num_warps", "shared"} <= metadata.keys():
            continue
        rows.append({"kernel": str(metadata["name"]), "num_warps": _int(metadata.get("num_warps")),
                     "num_stages": _int(metadata.get("num_stages")), "shared_bytes": _int(metadata.get("shared")),
                     "source": _source(path.with_suffix("")), "hash": metadata.get("hash") or path.parent.name})
    return pd.DataFrame(rows, columns=list(TRITON_KERNEL_COLUMNS))


def _source(stem: Path) -> str | None:
    """'file.py:line' of the kernel's definition: the first Python location its IR records."""
    for suffix in _IRS:
        ir = stem.with_suffix(suffix)
        if ir.is_file():
            with open(ir, "rb") as handle:  # the first location lies near the top: never the whole IR
                match = _LOC.search(handle.read(IR_HEAD_BYTES).decode("utf-8", errors="replace"))
            if match:
                return printable(f"{Path(match[1]).name}:{match[2]}")
    return None


def _int(value) -> int | None:
    """A count from the metadata (its numbers are finite: read_json_object); None for text or a bool."""
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
