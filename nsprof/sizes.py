"""Problem sizes as users type them: "4096" (every dimension 4096) or all dimensions in the op's
order ("1000x1200x800" for a GEMM's M x N x K, "1000x800" for M x K), several separated by commas
or given as repeated options."""

from __future__ import annotations

import math
import re

from nsprof.errors import UsageError

Size = tuple[int, ...]

_ITEM = re.compile(r"^\d+(x\d+)*$")
_EXAMPLE = (1000, 1200, 800)


def parse_sizes(values: list[str] | None, dims: str = "MxNxK", default: str = "4096") -> list[Size]:
    """Sizes of an op whose sizes are written `dims` ("MxNxK"), without repeats, in order."""
    ndim = len(dims.split("x"))
    example = "x".join(str(d) for d in _EXAMPLE[:ndim])
    items = [item.strip().lower() for v in (values or [default]) for item in v.split(",") if item.strip()]
    if not items:
        raise UsageError("no size given", f"pass --size 4096 or --size {example}")
    sizes: list[Size] = []
    for item in items:
        parts = item.split("x")
        if not _ITEM.match(item) or len(parts) not in (1, ndim):
            raise UsageError(
                f"bad size '{item}'",
                f"write N for a square problem or {dims} (e.g. {example}); separate several with commas",
            )
        size = tuple(int(d) for d in parts) * (ndim if len(parts) == 1 else 1)
        if min(size) < 1:
            raise UsageError(f"bad size '{item}': every dimension must be at least 1", "use sizes >= 1")
        if size not in sizes:
            sizes.append(size)
    return sizes


def size_label(size: Size) -> str:
    return "x".join(str(d) for d in size)


def short_size(size: Size) -> str:
    """'4096' when every dimension is equal, else the full label."""
    return str(size[0]) if len(set(size)) == 1 else size_label(size)


def parse_label(label: str) -> Size:
    """'1000x1200x800' -> (1000, 1200, 800): a label nsprof wrote (a range name, a record)."""
    return tuple(int(d) for d in label.split("x"))


def spread_sizes(labels: list[str], most: int) -> list[str]:
    """At most `most` of the size labels ("1024x1024x1024"), spread evenly from the smallest problem
    to the largest, in that order: what a chart of thousands of sizes draws (its data keeps all)."""
    ordered = sorted(labels, key=_volume)
    if len(ordered) <= most:
        return ordered
    return list(dict.fromkeys(ordered[round(i * (len(ordered) - 1) / (most - 1))] for i in range(most)))


def _volume(label: str) -> float:
    """The product of a label's dimensions ('1024x512x64' -> 2**25); inf for one that is not a size."""
    parts = label.split("x")
    return float(math.prod(int(part) for part in parts)) if all(part.isdigit() for part in parts) else float("inf")
