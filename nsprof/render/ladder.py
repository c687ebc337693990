"""Bar chart of a bench run: TFLOP/s per stage at each size, with cuBLAS as reference lines (one per
precision: FP32 dashed, TF32 dotted)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from nsprof.errors import NsprofError
from nsprof.registry import baseline_stage, get_stage, is_baseline_stage
from nsprof.render.format import problem_size

STAGE_INCHES = 1.1


def ladder_chart(records: list[dict], title: str, value: str = "tflops", ylabel: str = "TFLOP/s (median)") -> Figure:
    """One group of bars per stage, one bar per size, of each record's `value` (TFLOP/s, or a
    bandwidth for a ladder judged by bytes); lines mark the baselines (cuBLAS) per size: the first
    baseline in the records dashed, a second (cuBLAS TF32) dotted."""
    ok = [r for r in records if r["status"] == "ok"]
    stages = list(dict.fromkeys(r["stage"] for r in ok))
    sizes = list(dict.fromkeys(r["size"] for r in ok))
    # 1.1 in a stage keeps 12-character title lines apart ("tensor cores" beside "wgmma + TMA" ran
    # into each other at 0.95); tests/test_report.py measures their boxes
    fig, ax = plt.subplots(figsize=(max(10, STAGE_INCHES * len(stages)), 4.8), dpi=110)
    libraries = list(dict.fromkeys(r["stage"] for r in ok if is_baseline_stage(r["op"], r["stage"])))[:2]
    styles = dict(zip(libraries, ("--", ":")))
    width = 0.8 / len(sizes)
    colors = plt.get_cmap("viridis")([0.15 + 0.7 * i / max(1, len(sizes) - 1) for i in range(len(sizes))])
    for i, size in enumerate(sizes):
        by_stage = {r["stage"]: r[value] for r in ok if r["size"] == size}
        xs = [s + (i - (len(sizes) - 1) / 2) * width for s in range(len(stages))]
        ax.bar(xs, [by_stage.get(s, 0) for s in stages], width, label=problem_size(size), color=colors[i])
        for library, style in styles.items():
            if by_stage.get(library):  # across the stages compared with it only: v10 (TF32) is not FP32 cuBLAS's
                compared = [at for at, stage in enumerate(stages) if _baseline_of(ok, stage) == library]
                ax.hlines(by_stage[library], min(compared) - 0.45, max(compared) + 0.45, color=colors[i],
                          linestyle=style, linewidth=0.9, alpha=0.8)
    titles = {r["stage"]: r["title"] for r in ok}
    ax.set_xticks(range(len(stages)), [f"{s}\n{_wrap(titles[s])}" for s in stages], fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=11)
    lines = ", ".join(f"{'dashed' if style == '--' else 'dotted'}: {library}" for library, style in styles.items())
    ax.legend(title=f"size ({lines or 'no cuBLAS'})", fontsize=8, title_fontsize=8, loc="upper left")
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    fig.tight_layout()
    return fig


def _baseline_of(records: list[dict], stage: str) -> str | None:
    """The library stage `stage` is compared with (nsprof.registry.baseline_stage), by its precision."""
    op = next(r["op"] for r in records if r["stage"] == stage)
    try:
        return baseline_stage(op, get_stage(op, stage).precision.name).stage
    except NsprofError:  # an op or stage this nsprof does not know, or a precision without a baseline
        return None


def _wrap(text: str, width: int = 12) -> str:
    """Wrap a stage title under its bars, breaking at spaces and after hyphens."""
    pieces = text.replace("-", "- ").split()
    lines, line = [], ""
    for piece in pieces:
        joiner = "" if line.endswith("-") or not line else " "
        if line and len(line) + len(joiner) + len(piece) > width:
            lines.append(line)
            line = piece
        else:
            line = f"{line}{joiner}{piece}"
    return "\n".join([*lines, line])
