"""Kernel names short enough for a table, never two rows alike."""

from __future__ import annotations

from nsprof.analyze.ladder import short_kernel_name


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
