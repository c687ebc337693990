"""Problem sizes as users type them: "4096" (square), "1000x1200x800" (M x N x K),
several separated by commas or given as repeated options."""

from __future__ import annotations

import re

from nsprof.errors import UsageError

Size = tuple[int, int, int]

_ITEM = re.compile(r"^\d+(x\d+x\d+)?$")


def parse_sizes(values: list[str] | None, default: str = "4096") -> list[Size]:
    items = [item.strip().lower() for v in (values or [default]) for item in v.split(",") if item.strip()]
    if not items:
        raise UsageError("no size given", "pass --size 4096 or --size 1000x1200x800")
    sizes: list[Size] = []
    for item in items:
        if not _ITEM.match(item):
            raise UsageError(
                f"bad size '{item}'",
                "write N for a square problem or MxNxK (e.g. 1000x1200x800); separate several with commas",
            )
        dims = [int(d) for d in item.split("x")]
        m, n, k = dims * 3 if len(dims) == 1 else dims
        if min(m, n, k) < 1:
            raise UsageError(f"bad size '{item}': every dimension must be at least 1", "use sizes >= 1")
        if (m, n, k) not in sizes:
            sizes.append((m, n, k))
    return sizes


def size_label(size: Size) -> str:
    return "x".join(str(d) for d in size)
