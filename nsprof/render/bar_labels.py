"""Labels cut to fit their bars while bars stay told apart.

Names drawn side by side often share long stretches: nsprof:sgemm/v1/1024x1024x1024 and
.../v10/..., kernels of one template. A name too long for its bar first drops the words every
name shares at its start, then at its end (v10/streams), then those it shares with its most alike
names (streams), keeping the part that tells it apart, then words from its end. Cuts fall
only between a word and a separator (/ : _ , space brackets . -), so v10 never reads v1.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from nsprof.shorten import ELLIPSIS, SEPARATORS

_SEPARATOR_CLASS = re.escape("".join(sorted(SEPARATORS)))
WORD = re.compile(f"[^{_SEPARATOR_CLASS}]+")  # a run of characters between separators
Part = tuple[int, int]  # where a name's telling part starts and ends


def shared_parts(names) -> dict[str, list[Part]]:
    """For each distinct name, its parts that tell it apart, longest first: between the words every
    name shares at the start and at the end; then after the words it shares with its most alike
    other name and before those its siblings (the names that share them too) share at the end."""
    distinct = sorted(set(names))
    # sorted, the most alike name is a neighbour: each name's longest shared start is with the one before or after
    between = [_common_prefix(name, after) for name, after in pairwise(distinct)]
    prefix = {name: max(between[at - 1] if at else 0, between[at] if at < len(between) else 0)
              for at, name in enumerate(distinct)}
    siblings: dict[str, list[str]] = {}
    for name in distinct:
        siblings.setdefault(name[:prefix[name]], []).append(name)
    tail = {start: _common_suffix(group) for start, group in siblings.items()}
    everyone = (_common_prefix(distinct[0], distinct[-1]), _common_suffix(distinct)) if len(distinct) > 1 else (0, 0)
    parts = {}
    for name in distinct:
        shared = (everyone, (prefix[name], tail[name[:prefix[name]]]))
        parts[name] = list(dict.fromkeys((start, len(name) - end) for start, end in shared if start + end < len(name)))
    return parts


def fitted(name: str, room: float, parts: Sequence[Part] = ()) -> str | None:
    """`name` in at most `room` characters: whole, else without what all names share at its start,
    then at its end, then without what it shares with its most alike names, else its last part cut
    between words; None when not even one word of it fits."""
    candidates = [name]
    for start, end in parts:
        lead = ELLIPSIS if start else ""
        candidates += [lead + name[start:], lead + name[start:end] + (ELLIPSIS if end < len(name) else "")]
    for text in candidates:
        if len(text) <= room:
            return text
    start, end = parts[-1] if parts else (0, len(name))
    lead, middle = ELLIPSIS if start else "", name[start:end]
    for cut in range(min(len(middle) - 1, int(room) - len(lead) - 1), 0, -1):
        if middle[cut - 1] in SEPARATORS or middle[cut] in SEPARATORS:
            return lead + middle[:cut].rstrip() + ELLIPSIS
    return None


def _common_suffix(names: list[str]) -> int:
    """How many trailing characters all `names` share, from a word boundary (0 for one name)."""
    if len(names) < 2:
        return 0
    by_end = sorted(name[::-1] for name in names)
    return _common_prefix(by_end[0], by_end[-1])


def _common_prefix(a: str, b: str) -> int:
    """How many leading characters `a` and `b` share, backed off to a word boundary: the shared part
    ends with a separator (for reversed names: the shared end begins with one)."""
    low, high = 0, min(len(a), len(b))
    while low < high:  # the longest equal start, halving: slices compare at C speed, characters one by one would not
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    through_separator = _THROUGH_LAST_SEPARATOR.match(a, 0, low)
    return through_separator.end() if through_separator else 0


_THROUGH_LAST_SEPARATOR = re.compile(f"(?s).*[{_SEPARATOR_CLASS}]")
