"""Kernel and range names short enough for a table, never two rows alike."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable

from nsprof.kernel_names import kernel_label
from nsprof.render.bar_labels import ELLIPSIS, SEPARATORS, WORD, Part, fitted, shared_parts


def telling_names(names, width: int, kernels: bool = True) -> list[str]:
    """Each name in at most `width` characters, keeping the part that tells it from the others
    (nsprof.render.bar_labels: never cut inside a word, so v10 never reads v1); kernel names first
    lose `void`, namespaces and parameter lists. A label that another name reads as too (the
    range nsprof:verify/sgemm/v1/... cut to "…v1/1024x1024x1024" reads as nsprof:sgemm/v1/...)
    keeps also what tells it from those names ("…verify/sgemm/v1…"). Different names that still
    read alike are numbered apart ("…add_kernel… [2]"), every row of one name keeping one label.
    A label is tried only on the names that have its words (_WordIndex), so that the tens of
    thousands of range names of a JAX capture take seconds, not hours."""
    names = [str(name) for name in names]
    texts = {name: kernel_label(name) if kernels else name for name in dict.fromkeys(names)}
    parts = shared_parts(texts.values())
    index = _WordIndex(texts.values())
    having = _names_having(texts.values()) if kernels else {}

    def fit(text: str, room: int) -> str:
        label = _fit(text, room, parts[text])
        return _named(_with_base(label, text, room), text, room, having) if kernels else label

    labels = {name: fit(text, width) for name, text in texts.items()}
    for name, text in texts.items():
        if index.reads_as_another(labels[name], text):  # widen the telling part to what tells it from the names it reads as
            group = index.parts_among(labels[name], text)[:1] or [(0, len(text))]
            (start, end), (group_start, group_end) = parts[text][-1] if parts[text] else (0, len(text)), group[0]
            start, end = min(start, group_start), max(end, group_end)
            lead, trail = ELLIPSIS if start else "", ELLIPSIS if end < len(text) else ""
            # whole words only, never cut further: from the telling part on, the telling part
            # alone, or the name's start up to it (where its end is another name's end too)
            # last, the name's own start where that alone tells it (sgemm_v8_128x128_… where
            # …128x128_unchecked read as v10's kernel too)
            widened = [lead + text[start:], lead + text[start:end] + trail, text[:end] + trail,
                       fitted(text, width) or ""]
            if kernels:
                widened = [_named(label, text, width, having) for label in widened]
            labels[name] = next((label for label in widened
                                 if label and len(label) <= width and not index.reads_as_another(label, text)),
                                labels[name])
    labels = _numbered_apart(labels, texts, width, fit)
    return [labels[name] for name in names]


def named_rows(records: list[dict], key: str = "kernel", kernels: bool = True) -> Callable[[int], list[dict]]:
    """`rows_for` of terminal_table.fit_named: the records with their `key` names (telling_names)
    at most the width asked."""
    names = [record[key] for record in records]

    def rows_for(name_width: int) -> list[dict]:
        return [{**record, key: name} for record, name in zip(records, telling_names(names, name_width, kernels))]

    return rows_for


def _numbered_apart(labels: dict[str, str], texts: dict[str, str], width: int,
                    fit: Callable[[str, int], str]) -> dict[str, str]:
    """`labels` with every name after the first of a label numbered: fitted again into the room
    its mark leaves, " [2]", " [3]"... A number whose label is taken already (two labels fitted
    shorter alike) is skipped, jumping past the highest one given after that label."""
    numbered = dict(labels)
    taken = set(labels.values())
    names_of: dict[str, int] = {}  # names of each label so far
    highest: dict[str, int] = {}  # the highest number given after each refitted label
    for name, text in texts.items():
        label = labels[name]
        names_of[label] = number = names_of.get(label, 0) + 1
        if number == 1:
            continue
        while True:
            mark = f" [{number}]"
            refitted = fit(text, width - len(mark))
            if refitted + mark not in taken:
                break
            number = max(number + 1, highest.get(refitted, 0) + 1)
        highest[refitted] = max(highest.get(refitted, 0), number)
        numbered[name] = refitted + mark
        taken.add(numbered[name])
    return numbered


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
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_LETTERS = re.compile(r"[A-Za-z]")


def _names_having(texts) -> dict[str, int]:
    """How many of the kernel labels `texts` have each identifier (`PdV_kernel`, `lambda`)."""
    counts: dict[str, int] = defaultdict(int)
    for text in texts:
        for identifier in set(_IDENTIFIER.findall(text)):
            counts[identifier] += 1
    return counts


def _named(label: str, text: str, width: int, having: dict[str, int]) -> str:
    """A label that names no kernel (the part telling instances apart: "…2)]>") gets the name's
    most telling identifier in front: its first one fewer kernels share than its own name
    ("…PdV_kernel…2)]>" for par_ranged2d_kernel<PdV_kernel::[lambda (instance 2)]>), cut between
    its words where it is too long, alone where even so both do not fit; unchanged where nothing fits."""
    if _LETTERS.search(label):
        return label
    identifiers = _IDENTIFIER.findall(text)
    if not identifiers:
        return label
    own = having.get(identifiers[0], 1)
    telling = next((word for word in identifiers[1:] if having.get(word, 1) < own), identifiers[0])
    lead, rest = "" if text.startswith(telling) else ELLIPSIS, label.removeprefix(ELLIPSIS)
    # the identifier whole, else its first words ("advec_mom…" of advec_mom_kernel), the rest after it
    cuts = [telling] + [telling[:at] for at in range(len(telling) - 1, 0, -1) if telling[at] == "_"]
    named = [lead + cut + ELLIPSIS + rest for cut in cuts] + [lead + cut + ELLIPSIS for cut in cuts]
    return next((label for label in named if len(label) <= width), label)


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


class _WordIndex:
    """Which of `names` a label reads as (_reads_as), tried only on the names that have every word
    of the label, the few an index from words to names gives: the label's pieces are found on word
    boundaries, so their words are whole words of any name it reads as. Answers are kept, as many
    names share a label."""

    def __init__(self, names):
        self._everyone = frozenset(names)
        self._having: dict[str, set[str]] = defaultdict(set)  # each word: the names that have it
        for name in self._everyone:
            for word in WORD.findall(name):
                self._having[word].add(name)
        self._read_as: dict[str, frozenset[str]] = {}
        self._parts: dict[str, dict[str, list[Part]]] = {}

    def read_as(self, label: str) -> frozenset[str]:
        """The names `label` reads as."""
        if label not in self._read_as:
            self._read_as[label] = frozenset(name for name in self._candidates(label) if _reads_as(label, name))
        return self._read_as[label]

    def reads_as_another(self, label: str, name: str) -> bool:
        """Whether `label` reads as a name besides `name`."""
        read_as = self.read_as(label)
        return len(read_as) > (name in read_as)

    def parts_among(self, label: str, name: str) -> list[Part]:
        """`name`'s telling parts among itself and the names `label` reads as (shared_parts), worked
        out once for all the names of that label where `name` is one it reads as."""
        group = self.read_as(label)
        if name not in group:
            return shared_parts([name, *group])[name]
        if label not in self._parts:
            self._parts[label] = shared_parts(group)
        return self._parts[label][name]

    def _candidates(self, label: str) -> frozenset[str] | set[str]:
        words = set(WORD.findall(label.replace(ELLIPSIS, " ")))  # an ellipsis ends a word as a separator does
        if not words:  # no word at all ("…/…"): any name might
            return self._everyone
        having = sorted((self._having.get(word, set()) for word in words), key=len)
        return having[0].intersection(*having[1:])  # smallest first: no more work than the rarest word's names


def _on_boundaries(name: str, start: int, end: int) -> bool:
    before = start == 0 or name[start - 1] in SEPARATORS or name[start] in SEPARATORS
    after = end == len(name) or name[end] in SEPARATORS or name[end - 1] in SEPARATORS
    return before and after
