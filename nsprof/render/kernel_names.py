"""Kernel and range names short enough for a table, never two rows alike."""

from __future__ import annotations

from nsprof.analyze.ladder import short_kernel_name
from nsprof.render.bar_labels import fitted, kernel_label, shared_parts


def short_names(names, width: int) -> list[str]:
    """Base names (short_kernel_name); different full names that shorten alike are numbered apart
    ("reduce_kernel [2]") in the order they come, while every row of one full name keeps one label."""
    labels: dict[str, str] = {}
    taken: dict[str, int] = {}
    shown = []
    for name in map(str, names):
        if name not in labels:
            short = short_kernel_name(name, width)
            taken[short] = taken.get(short, 0) + 1
            labels[name] = short if taken[short] == 1 else f"{short} [{taken[short]}]"
        shown.append(labels[name])
    return shown


def telling_names(names, width: int, kernels: bool = True) -> list[str]:
    """Each name in at most `width` characters, keeping the part that tells it from the others
    (nsprof.render.bar_labels: never cut inside a word, so v10 never reads v1); kernel names first
    lose `void`, namespaces and parameter lists. Different names that still read alike are
    numbered apart ("…add_kernel… [2]"), every row of one name keeping one label."""
    names = [str(name) for name in names]
    texts = {name: kernel_label(name) if kernels else name for name in dict.fromkeys(names)}
    parts = shared_parts(texts.values())
    labels: dict[str, str] = {}
    taken: dict[str, int] = {}
    for name, text in texts.items():
        label = fitted(text, width, parts[text]) or text[: max(width - 1, 1)] + "…"
        taken[label] = taken.get(label, 0) + 1
        if taken[label] > 1:
            mark = f" [{taken[label]}]"
            label = (fitted(text, width - len(mark), parts[text]) or label[: max(width - len(mark) - 1, 1)] + "…") + mark
        labels[name] = label
    return [labels[name] for name in names]
