"""Kernel and range names short enough for a table, never two rows alike."""

from __future__ import annotations

import re

from nsprof.render.bar_labels import ELLIPSIS, SEPARATORS, fitted, kernel_label, shared_parts


def telling_names(names, width: int, kernels: bool = True) -> list[str]:
    """Each name in at most `width` characters, keeping the part that tells it from the others
    (nsprof.render.bar_labels: never cut inside a word, so v10 never reads v1); kernel names first
    lose `void`, namespaces and parameter lists. A label that another name reads as too (the
    range nsprof:verify/sgemm/v1/... cut to "…v1/1024x1024x1024" reads as nsprof:sgemm/v1/...)
    keeps also what tells it from those names ("…verify/sgemm/v1…"). Different names that still
    read alike are numbered apart ("…add_kernel… [2]"), every row of one name keeping one label."""
    names = [str(name) for name in names]
    texts = {name: kernel_label(name) if kernels else name for name in dict.fromkeys(names)}
    parts = shared_parts(texts.values())

    def fit(text: str, room: int) -> str:
        label = _fit(text, room, parts[text])
        return _with_base(label, text, room) if kernels else label

    labels = {name: fit(text, width) for name, text in texts.items()}
    for name, text in texts.items():
        alike = [other for other in set(texts.values()) if other != text and _reads_as(labels[name], other)]
        if alike:  # widen the telling part to what tells it from the names it reads as
            group = shared_parts([text, *alike])[text][:1] or [(0, len(text))]
            (start, end), (group_start, group_end) = parts[text][-1] if parts[text] else (0, len(text)), group[0]
            start, end = min(start, group_start), max(end, group_end)
            lead, trail = ELLIPSIS if start else "", ELLIPSIS if end < len(text) else ""
            # whole words only, never cut further: from the telling part on, the telling part
            # alone, or the name's start up to it (where its end is another name's end too)
            widened = [lead + text[start:], lead + text[start:end] + trail, text[:end] + trail]
            labels[name] = next((label for label in widened if len(label) <= width and not any(
                _reads_as(label, other) for other in texts.values() if other != text)), labels[name])
    taken: dict[str, int] = {}
    for name, text in texts.items():
        label = labels[name]
        taken[label] = taken.get(label, 0) + 1
        if taken[label] > 1:
            mark = f" [{taken[label]}]"
            labels[name] = fit(text, width - len(mark)) + mark
    return [labels[name] for name in names]


def _with_base(label: str, text: str, width: int) -> str:
    """A kernel's label cut at its start gets the kernel's own name back in front where there is
    room: "par_ranged2d_kernel…2)]>" rather than "…2)]>" (instances of one Kokkos template)."""
    base = _BASE.match(text)
    if not label.startswith(ELLIPSIS) or not base:
        return label
    kept = label[1:].split(ELLIPSIS)[0]
    at = text.find(kept)
    whole = text[:at] + label[1:] if 0 <= at < base.end() else base.group() + label  # cut inside its name: restore the name
    return whole if len(whole) <= width else label


_BASE = re.compile(r"[^<(\s]+")  # a kernel label's name, before its template arguments


def _fit(text: str, width: int, parts) -> str:
    """Its telling part; where not one word of that fits, its start cut between words; only a
    first word longer than `width` is cut inside."""
    return fitted(text, width, parts) or fitted(text, width) or text[: max(width - 1, 1)] + ELLIPSIS


def _reads_as(label: str, name: str) -> bool:
    """Whether `label` could be a shortening of `name`: its pieces found in `name` in order, each
    on word boundaries, anchored at the start or end where the label has no ellipsis there."""
    pieces = label.split(ELLIPSIS)
    at = 0
    for index, piece in enumerate(pieces):
        if not piece:
            continue
        found = name.find(piece, at)
        while found >= 0 and not _on_boundaries(name, found, found + len(piece)):
            found = name.find(piece, found + 1)
        if found < 0 or (index == 0 and found != 0):
            return False
        at = found + len(piece)
    return not pieces[-1] or (name.endswith(pieces[-1]) and at == len(name))


def _on_boundaries(name: str, start: int, end: int) -> bool:
    before = start == 0 or name[start - 1] in SEPARATORS or name[start] in SEPARATORS
    after = end == len(name) or name[end] in SEPARATORS or name[end - 1] in SEPARATORS
    return before and after
