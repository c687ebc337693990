"""The roofline figure: roofs, one point per piece of work and memory level, and the ladder's path
from its first stage to its last.

Marker shape tells the memory level (DRAM, L2, L1: a hierarchical roofline when L2 and L1
bytes were collected); colour tells the problem size when there are several, else the ladder
(each op keeps one colour in every chart), else, for other programs' kernels, the level too.
A piece of work has the same FLOP/s at every level, so its points sit on one horizontal line,
drawn thin; the label goes on its DRAM point (else its rightmost), and the ladder's path joins
those labelled points. Past MAX_LABELS pieces of work (another program's many kernels), only the
longest-running are labelled. Memory roofs run diagonally until they meet the highest compute
roof; compute roofs run flat from where they meet the fastest memory roof. A compute roof
appears only when some point did most of its FLOPs on those units (an HGEMM's few FP32 epilogue
FLOPs do not bring the FP32 roof into its chart).

CPU stages (timed on the wall clock beside a capture) sit at the op's compulsory intensity (a
diamond: declared bytes, not measured traffic) under the host's own roofs, drawn beside the GPU's
in the CPU's colour and named after its CPU under the title, so both machines share one chart.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import itertools
from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
from matplotlib.transforms import Bbox

from nsprof.analyze.roofline import CARRIED, COMPULSORY, LEVELS, UNITS, WALL_CLOCK, Roof, ridge_intensity
from nsprof.ladder.registry import all_ops
from nsprof.render import format as fmt
from nsprof.render.labels import Label, merge_close, place_labels
from nsprof.sizes import spread_sizes

MARKERS = {"dram": "o", "l2": "s", "l1": "^", COMPULSORY: "D"}
MARKER_PT = 6  # marker diameter (points); scatter sizes are its square
ROOF_STYLES: dict[str, dict[str, Any]] = {  # Line2D properties
    "dram": {"color": "#3b3b3b", "linestyle": "-"},
    "l2": {"color": "#6f6f6f", "linestyle": "--"},
    "l1": {"color": "#707070", "linestyle": ":"},
    "fp32": {"color": "#000000", "linestyle": "-"},
    "tf32": {"color": "#7b3294", "linestyle": "-."},
    "fp16": {"color": "#c51b7d", "linestyle": "-."},
}
CPU_COLOR = "#b2182b"  # the host's roofs (nsprof.ladder_analysis.work.host_roofs): no ladder's or GPU roof's colour
ROOF_STYLES.update({"cpu_memory": {"color": CPU_COLOR, "linestyle": (0, (6, 2))},
                    "cpu_fp32": {"color": CPU_COLOR, "linestyle": "-"}})
LEVEL_COLORS = {"dram": "#1f77b4", "l2": "#d95f02", "l1": "#1b9e77", COMPULSORY: CPU_COLOR}
SIZE_COLORS = ("#1f77b4", "#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e", "#a6761d")
OTHER_COLOR = "#444444"  # work with no problem size (another program's kernels)
# by the op's place in the registry; none a roof's colour
LADDER_COLORS = ("#1f77b4", "#d95f02", "#1b9e77", "#a6761d", "#66a61e")
MAX_LABELS = 40  # more labels than this do not fit a readable figure
TITLE_SIZES = 4  # sizes the title names one by one; past this, how many and their range
MAX_SIZES = 8  # of a ladder's sizes, the chart draws this many, spread over them (every point stays in roofline.csv)
UNIT_KEYS = {unit.name: unit.key for unit in UNITS if unit.ceiling_field}


def roofline_figure(points: pd.DataFrame, roofs: list[Roof], gpu: str | None,
                    figsize: tuple[float, float] = (10, 6.6), dpi: int = 110, cpu_roofs: Sequence[Roof] = ()) -> Figure:
    """The roofline of `points` (nsprof.analyze.roofline.roofline_points) under `roofs`, and under
    `cpu_roofs` (the host's: LadderAnalysis.cpu_roofs) when some point is a CPU stage's."""
    points, sizes_note = _spread_sizes(points.reset_index(drop=True))
    fig = plt.figure(figsize=figsize, dpi=dpi, layout="constrained")
    ax = fig.add_subplot()
    shown = _roofs_to_show(points, roofs)
    host = list(cpu_roofs) if (points["level"] == COMPULSORY).any() else []
    xlim, ylim = _limits(points, shown, host)
    ax.set(xscale="log", yscale="log", xlim=xlim, ylim=ylim)
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel(f"performance (TFLOP/s{_time_sources(points)})")
    _format_axes(ax)
    colors = _point_colors(points)
    labelled = _rightmost_per_work(points)
    longest = points.loc[labelled, "duration_ns"].fillna(0).rank(ascending=False, method="first")
    named = labelled[(longest <= MAX_LABELS).to_numpy()]
    rows = _rows(points)
    _draw_roofs(ax, shown, xlim)
    _draw_roofs(ax, host, xlim)  # the host's own: its memory roof meets its own FP32 roof
    _draw_rows(ax, rows)
    _draw_paths(ax, points.loc[labelled], _label_colors(points).loc[labelled])
    for level in [level.key for level in LEVELS] + [COMPULSORY]:
        at_level = points["level"] == level
        on_cpu = level == COMPULSORY  # declared bytes: a diamond edged in the host's colour
        if on_cpu and not at_level.any():
            continue
        ax.scatter(points.loc[at_level, "intensity_flop_per_byte"], points.loc[at_level, "gflops_per_s"] / 1e3,
                   s=MARKER_PT ** 2, zorder=4, marker=MARKERS[level], c=colors[at_level.to_numpy()],
                   edgecolors=CPU_COLOR if on_cpu else "white", linewidths=1.0 if on_cpu else 0.6, gid=f"points:{level}")
    fig.suptitle(_title(points, gpu, host), fontsize=12, fontweight="bold")
    ax.set_title(_sources_line(points) + _ceiling_line(shown, points) + _host_line(host) + _waves_line(points)
                 + _unlabelled_note(len(labelled) - len(named)) + sizes_note, fontsize=9, color="#444444")
    _legend(fig, points)
    fig.draw_without_rendering()  # settle the layout, then freeze it: labels are placed for this layout
    fig.set_layout_engine("none")
    # the host's FP32 roof runs through its stages' column of points: their labels keep off it as off the rows
    _point_labels(ax, points, named, np.vstack([rows.reshape(-1, 3), _flat_roofs(host, xlim)]),
                  avoid=_roof_labels(ax, shown + host, xlim, ylim))
    return fig


def _flat_roofs(host: Sequence[Roof], xlim: tuple[float, float]) -> np.ndarray:
    """The host's compute roofs as lines (x0, x1, y): from where its memory roof meets them to the right edge."""
    fastest = max((roof.per_second for roof in host if roof.kind == "memory"), default=None)
    return np.array([(roof.per_second / fastest if fastest else xlim[0], xlim[1], roof.per_second / 1e12)
                     for roof in host if roof.kind == "compute"]).reshape(-1, 3)


def _time_sources(points: pd.DataFrame) -> str:
    """Which time the speeds are over, for the axis label: every table shows the same speed."""
    names = {"nsys": "nsys time per launch", "ncu": "ncu duration", WALL_CLOCK: "the CPU stages' wall clock"}
    used = [names[source] for source in names if (points["time_source"] == source).any()]
    return f", over {' or '.join(used)}" if used else ""


def roof_rate(roof: Roof) -> str:
    """'4.80 TB/s', '67.0 TFLOP/s'."""
    return fmt.bytes_per_s(roof.per_second) if roof.kind == "memory" else fmt.flops_per_s(roof.per_second)


def _roofs_to_show(points: pd.DataFrame, roofs: list[Roof]) -> list[Roof]:
    """Memory roofs of the levels that have points (DRAM always) and the compute roofs of the
    units that did most of some point's FLOPs."""
    levels = set(points["level"]) | {"dram"}
    units = {UNIT_KEYS[name] for name in points["main_unit"].dropna() if name in UNIT_KEYS}
    return [roof for roof in roofs if (roof.kind == "memory" and roof.key in levels) or roof.key in units]


def _limits(points: pd.DataFrame, roofs: list[Roof],
            host: Sequence[Roof] = ()) -> tuple[tuple[float, float], tuple[float, float]]:
    """Axis ranges (x: FLOP/byte, y: TFLOP/s) that hold every point, ridge and roof label (the GPU's
    roofs' and, apart, the host's)."""
    intensities = list(points["intensity_flop_per_byte"])
    tflops = list(points["gflops_per_s"] / 1e3)
    for machine in (roofs, host):
        memory = [roof for roof in machine if roof.kind == "memory"]
        compute = [roof for roof in machine if roof.kind == "compute"]
        intensities += [ridge_intensity(m, c) for m in memory for c in compute]
        tflops += [c.per_second / 1e12 for c in compute]
    if not intensities:
        return (0.1, 1000.0), (0.1, 100.0)
    low_x, high_x = min(intensities) / 4, max(intensities) * 4
    low_y, high_y = min(tflops) / 3, max(tflops) * 3
    return (low_x, high_x), (low_y, high_y)


def _format_axes(ax: Axes) -> None:
    """Plain numbers on log axes (0.1, 1, 10, 100) rather than powers of ten."""
    plain = FuncFormatter(lambda value, _: f"{value:g}")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(base=10))
        axis.set_major_formatter(plain)
        axis.set_minor_formatter(NullFormatter())
    ax.grid(which="major", alpha=0.25)
    ax.grid(which="minor", alpha=0.08)
    ax.set_axisbelow(True)


def _draw_roofs(ax: Axes, roofs: list[Roof], xlim: tuple[float, float]) -> None:
    memory = [roof for roof in roofs if roof.kind == "memory"]
    compute = [roof for roof in roofs if roof.kind == "compute"]
    top = max((roof.per_second for roof in compute), default=None)
    fastest = max((roof.per_second for roof in memory), default=None)
    for roof in memory:
        end = top / roof.per_second if top else xlim[1]
        xs = np.array([xlim[0], min(end, xlim[1])])
        ax.plot(xs, roof.gflops_at(xs) / 1e3, linewidth=1.6, zorder=3, gid=f"roof:{roof.key}", **ROOF_STYLES[roof.key])
    for roof in compute:
        start = roof.per_second / fastest if fastest else xlim[0]
        xs = np.array([max(start, xlim[0]), xlim[1]])
        ax.plot(xs, roof.gflops_at(xs) / 1e3, linewidth=1.6, zorder=3, gid=f"roof:{roof.key}", **ROOF_STYLES[roof.key])


def _roof_labels(ax: Axes, roofs: list[Roof], xlim, ylim) -> list[Bbox]:
    """Name each roof along its line (memory roofs near their low end, compute roofs at the right
    end) and return the labels' boxes for the point labels to avoid."""
    # matplotlib's stubs type the canvas as FigureCanvasBase; nsprof draws on Agg's, which has get_renderer
    renderer = ax.figure.canvas.get_renderer()  # type: ignore[attr-defined]
    boxes = []
    for roof in roofs:
        style = ROOF_STYLES[roof.key]
        text = f"{roof.name} {roof_rate(roof)} ({'measured' if roof.source.startswith('measured') else 'datasheet'})"
        if roof.kind == "compute" and roof.host:  # at the left of its flat part: the CPU stages sit under its right end
            memory = [other.per_second for other in roofs if other.host and other.kind == "memory"]
            start = max(xlim[0], roof.per_second / max(memory)) if memory else xlim[0]
            label = ax.annotate(text, xy=(start, roof.per_second / 1e12), xytext=(6, 3), textcoords="offset points",
                                ha="left", va="bottom", fontsize=8.5, color=style["color"], zorder=5)
            if label.get_window_extent(renderer).x1 > ax.get_window_extent(renderer).x1:  # a ridge near the right edge
                label.remove()
                label = ax.annotate(text, xy=(xlim[1], roof.per_second / 1e12), xytext=(-6, 3),
                                    textcoords="offset points", ha="right", va="bottom", fontsize=8.5,
                                    color=style["color"], zorder=5)
        elif roof.kind == "compute":
            label = ax.annotate(text, xy=(xlim[1], roof.per_second / 1e12), xytext=(-6, 3), textcoords="offset points",
                                ha="right", va="bottom", fontsize=8.5, color=style["color"], zorder=5)
        else:
            enter = max(xlim[0], ylim[0] * 1e12 / roof.per_second)  # where the line enters the axes
            x = enter * (xlim[1] / xlim[0]) ** 0.04
            y = roof.per_second * x / 1e12
            label = ax.annotate(text, xy=(x, y), xytext=(0, 4), textcoords="offset points", ha="left", va="bottom",
                                fontsize=8.5, color=style["color"], zorder=5, rotation=_slope_degrees(ax, roof),
                                rotation_mode="anchor")
        boxes.append(label.get_window_extent(renderer).padded(2))
    return boxes


def _slope_degrees(ax: Axes, roof: Roof) -> float:
    """The on-screen angle of a memory roof (slope 1 in log-log, tilted by the axes' aspect)."""
    xs = np.array([1.0, 10.0])
    start, end = ax.transData.transform(np.column_stack([xs, roof.gflops_at(xs) / 1e3]))
    return float(np.degrees(np.arctan2(end[1] - start[1], end[0] - start[0])))


def _draw_rows(ax: Axes, rows: np.ndarray) -> None:
    for x0, x1, y in rows:
        ax.plot([x0, x1], [y, y], color="#bdbdbd", linewidth=0.8, zorder=2)


def _rows(points: pd.DataFrame) -> np.ndarray:
    """A line (x0, x1, y) through the points of each piece of work measured at several levels."""
    spans = points.groupby(_work_keys(points), sort=False).agg(
        x0=("intensity_flop_per_byte", "min"), x1=("intensity_flop_per_byte", "max"), y=("gflops_per_s", "first"))
    spans = spans[spans["x1"] > spans["x0"]]
    return np.column_stack([spans["x0"], spans["x1"], spans["y"] / 1e3])


def _draw_paths(ax: Axes, labelled: pd.DataFrame, colors: pd.Series) -> None:
    """Arrows from each stage to the next (ladder order) at each size, between labelled points."""
    stages = labelled[labelled["stage"].notna()]
    for _, path in stages.groupby(["op", "size"], sort=False):
        xy = list(zip(path["intensity_flop_per_byte"], path["gflops_per_s"] / 1e3))
        color = colors[path.index[0]]
        for start, end in itertools.pairwise(xy):
            ax.annotate("", xy=end, xytext=start, zorder=2,
                        arrowprops={"arrowstyle": "-|>,head_length=0.5,head_width=0.22", "color": color,
                                    "alpha": 0.45, "linewidth": 0.9, "shrinkA": 4, "shrinkB": 5})


def _point_labels(ax: Axes, points: pd.DataFrame, labelled: pd.Index, rows: np.ndarray, avoid: list[Bbox]) -> None:
    chosen = points.loc[labelled]
    labels = [Label(x, y / 1e3, text, color) for x, y, text, color in
              zip(chosen["intensity_flop_per_byte"], chosen["gflops_per_s"], chosen["label"], _label_colors(chosen))]
    labels = merge_close(ax, labels, distance_pt=MARKER_PT)
    others = points.drop(index=labelled)
    place_labels(ax, labels, avoid=avoid, hlines=rows,
                 markers=np.column_stack([others["intensity_flop_per_byte"], others["gflops_per_s"] / 1e3]))


def _spread_sizes(points: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The points of at most MAX_SIZES of the stages' sizes (nsprof.sizes.spread_sizes), and a note
    saying so; all of them where there are no more (a capture of 20,000 CPU stage records would draw
    a legend entry and a path per size)."""
    sizes = [size for size in dict.fromkeys(_sizes(points)) if size is not None]
    if len(sizes) <= MAX_SIZES:
        return points, ""
    kept = spread_sizes(sizes, MAX_SIZES)
    chosen = [size is None or size in kept for size in _sizes(points)]
    return points[chosen].reset_index(drop=True), \
        f"\n{len(kept)} of {len(sizes):,} sizes drawn, spread from {kept[0]} to {kept[-1]}; all in roofline.csv"


def _unlabelled_note(count: int) -> str:
    return f"\nlabels on the {MAX_LABELS} longest-running; {count} more unlabelled" if count > 0 else ""


def _rightmost_per_work(points: pd.DataFrame) -> pd.Index:
    """Each piece of work's labelled point, in ladder order: its DRAM point, the level every
    table's intensity is of, else its point of highest intensity (h6's L1 point, at 1024 FLOP/B,
    once took the label and the path's arrow from its DRAM point at 511)."""
    ranked = points.assign(_dram=(points["level"] == "dram").astype(int))
    keys = _work_keys(points)
    chosen = ranked.sort_values(["_dram", "intensity_flop_per_byte"], kind="stable").groupby(keys, sort=False).tail(1)
    order = {key: at for at, key in enumerate(dict.fromkeys(keys))}  # first-seen order: a shared label reads 's2, s3, s4
    return pd.Index(sorted(chosen.index, key=lambda index: order[keys[index]]))


def _work_keys(points: pd.DataFrame) -> pd.Series:
    """One key per piece of work: its label and where it comes from."""
    columns = [points[column] for column in ("label", *CARRIED)]
    return pd.Series(["|".join(map(str, values)) for values in zip(*columns)], index=points.index)


def _legend(fig: Figure, points: pd.DataFrame) -> None:
    colored = _color_names(points)
    levels = [level for level in LEVELS if (points["level"] == level.key).any()]
    gray = "#555555"
    handles = [Line2D([], [], linestyle="", marker=MARKERS[level.key], markersize=7,
                      color=gray if colored else LEVEL_COLORS[level.key], label=f"{level.name} bytes")
               for level in levels]
    if (points["level"] == COMPULSORY).any():
        handles.append(Line2D([], [], linestyle="", marker=MARKERS[COMPULSORY], markersize=6.5,
                              color=gray if colored else LEVEL_COLORS[COMPULSORY], markeredgecolor=CPU_COLOR,
                              label=f"compulsory bytes: {_compulsory_rule(points)} (CPU stages, not measured)"))
    title = "intensity: FLOPs per byte moved at"
    if len(colored) > 1:
        handles += [Line2D([], [], linestyle="", marker="o", color=color, markersize=7, label=name)
                    for name, color in colored.items()]
        title += " (marker) · " + ("problem size" if len(_size_colors(points)) else "ladder") + " (colour)"
    if handles:
        fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 7), fontsize=8.5,
                   frameon=False, title=title, title_fontsize=8.5)


def _label_colors(points: pd.DataFrame) -> pd.Series:
    """Label (and path) colours: the size's when there are several sizes, else the ladder's, else near-black."""
    colors = _mark_colors(points)
    return colors if colors is not None else pd.Series("#222222", index=points.index, dtype=object)


def _point_colors(points: pd.DataFrame) -> np.ndarray:
    """One colour per point: its size's when there are several sizes, else its ladder's, else its level's."""
    colors = _mark_colors(points)
    if colors is not None:
        return colors.to_numpy(dtype=object)
    return points["level"].map(LEVEL_COLORS).to_numpy(dtype=object)


def _mark_colors(points: pd.DataFrame) -> pd.Series | None:
    """Per point, its size's colour when the stages of one ladder span several sizes, else its
    ladder's (other kernels grey) when some are stages; None for kernels alone (their level
    colours them)."""
    by_size = _size_colors(points)
    if by_size:
        return pd.Series([by_size[size] for size in _sizes(points)], index=points.index, dtype=object)
    if not points["stage"].notna().any():
        return None
    by_op = _ladder_colors()
    return pd.Series([by_op.get(op, OTHER_COLOR) if isinstance(stage, str) else OTHER_COLOR
                      for op, stage in zip(points["op"], points["stage"])], index=points.index, dtype=object)


def _color_names(points: pd.DataFrame) -> dict[str, str]:
    """The legend's colour entries (name -> colour), in the points' order; {} when level colours them."""
    by_size = _size_colors(points)
    if by_size:
        return {_size_name(size): color for size, color in by_size.items()}
    colors = _mark_colors(points)
    if colors is None:
        return {}
    names = [f"{op.upper()} ladder" if isinstance(stage, str) else "other kernels"
             for op, stage in zip(points["op"], points["stage"])]
    return dict(zip(names, colors))


def _ladder_colors() -> dict[str, str]:
    """One colour per op, the same in every chart: by its place in the registry."""
    return {op: LADDER_COLORS[i % len(LADDER_COLORS)] for i, op in enumerate(all_ops())}


def _size_colors(points: pd.DataFrame) -> dict:
    """Colours of the sizes when points span several (work without a size counts as one), else {};
    {} too when stages of several ladders share the chart: the ladder's colour tells them apart."""
    sizes = list(dict.fromkeys(_sizes(points)))
    if len(sizes) < 2 or points.loc[points["stage"].notna(), "op"].nunique() > 1:
        return {}
    stage_sizes = [size for size in sizes if size is not None]
    colors = {size: SIZE_COLORS[i % len(SIZE_COLORS)] for i, size in enumerate(stage_sizes)}
    if None in sizes:
        colors[None] = OTHER_COLOR
    return colors


def _sizes(points: pd.DataFrame) -> list:
    return [size if isinstance(size, str) else None for size in points["size"]]


def _size_name(size: str | None) -> str:
    return "other kernels" if size is None else fmt.problem_size(size)


def _host_label(host: Sequence[Roof]) -> str:
    """'CPU (AMD EPYC): 0.252 TFLOP/s FP32, 45.4 GB/s memory': the host's roofs, named after its CPU."""
    rates = [f"{roof_rate(roof)} {'FP32' if roof.kind == 'compute' else 'memory'}"
             for roof in sorted(host, key=lambda roof: roof.kind != "compute")]
    return f"CPU ({host[0].host or 'the host'}): {', '.join(rates)}" if host else ""


def _host_line(host: Sequence[Roof]) -> str:
    """A line under the title for the host's roofs: 'CPU (AMD EPYC): 0.252 TFLOP/s FP32, 45.4 GB/s memory
    (measured 2026-11-26)'; none without them."""
    if not host:
        return ""
    dates = dict.fromkeys(roof.source.split(" by ")[0].split(";")[0] for roof in host)
    return f"\n{_host_label(host)} ({', '.join(dates)})"


def _compulsory_rule(points: pd.DataFrame) -> str:
    """The compulsory bytes of the ops whose CPU stages are drawn: '4(MK + KN + MN)' (Op.min_bytes_rule)."""
    ops = all_ops()
    on_cpu = points.loc[points["level"] == COMPULSORY, "op"]
    return " or ".join(dict.fromkeys(ops[op].min_bytes_rule for op in on_cpu if op in ops)) or "the op's"


def _title(points: pd.DataFrame, gpu: str | None, host: Sequence[Roof] = ()) -> str:
    ops = sorted(set(points["op"].dropna()))
    sizes = [size for size in dict.fromkeys(_sizes(points)) if size is not None]
    at = ", ".join(_size_name(s) for s in sizes) if len(sizes) <= TITLE_SIZES else \
        f"{len(sizes)} sizes, {_size_name(sizes[0])} to {_size_name(sizes[-1])}"
    subject = f"{', '.join(op.upper() for op in ops)} ladder at {at}" if ops else "kernels"
    if ops and points["stage"].isna().any():
        subject += " and other kernels"
    machine = gpu or "an unknown GPU"
    if host:  # the CPU is named under the title, beside its roofs: a long model name would not fit here
        machine += " and its host's CPU"
    return f"Roofline: {subject} on {machine}"


SOURCES_WIDTH = 110  # characters of the subtitle line that names the profiles: what the figure's width holds


def _sources_line(points: pd.DataFrame) -> str:
    """'from h200-sgemm-1024, h200-sgemm-tf32-1024\n': the profiles the points come from, as many as
    fit the figure's width, then how many more ('and 3 more': the CSV and the report name each)."""
    profiles = [name for name in dict.fromkeys(points["profile"]) if isinstance(name, str)]
    return _fitted("from ", profiles, "") + "\n" if profiles else ""


def _waves_line(points: pd.DataFrame) -> str:
    """'\nlaunched in waves: h6 at 1024³ 0.97 (3% of the slots idle)': how the stages whose launch
    plan is counted (nsprof.ladder.ops.waves.COUNTED; roofline.csv's launch_* columns) filled the GPU at each
    size, part of why a point sits under its roof; as many as the subtitle's width holds, then how many more."""
    if "launch_waves" not in points:
        return ""
    counted = points.dropna(subset=["launch_waves"]).drop_duplicates(["stage", "size"])
    parts = [f"{row.stage} at {_size_name(row.size)} {row.launch_waves:.2f} ({row.launch_idle_share:.0%} of the "
             "slots idle)" for row in counted.itertuples()]
    return "\n" + _fitted("launched in waves: ", parts, " (roofline.csv)") if parts else ""


def _fitted(head: str, parts: list[str], where: str) -> str:
    """head + as many of `parts` as fit SOURCES_WIDTH, then 'and N more' + `where` (where the rest are named)."""
    shown = parts[:1]
    for part in parts[1:]:
        rest = len(parts) - len(shown) - 1
        tail = f" and {rest} more{where}" if rest else ""
        if len(head + ", ".join([*shown, part]) + tail) > SOURCES_WIDTH:
            break
        shown.append(part)
    more = len(parts) - len(shown)
    return head + ", ".join(shown) + (f" and {more} more{where}" if more else "")


def _ceiling_line(roofs: list[Roof], points: pd.DataFrame) -> str:
    """Where the ceilings come from: 'ceilings measured 2026-11-21: DRAM, FP32; from the datasheet:
    L1, TF32 tensor · no L2 roof (measure it: nsprof ceilings)'."""
    if not roofs:
        return "no ceilings known for this GPU: points only (measure them: nsprof ceilings)"
    by_source: dict[str, list[str]] = {}
    for roof in roofs:
        source = roof.source.split(" by ")[0]  # 'measured 2026-11-21': the method is in the CSV and report
        by_source.setdefault("from the datasheet" if source == "datasheet" else source, []).append(roof.name)
    line = "ceilings " + "; ".join(f"{source}: {', '.join(names)}" for source, names in by_source.items())
    known = {roof.key for roof in roofs}
    missing = [level.name for level in LEVELS if level.key not in known and (points["level"] == level.key).any()]
    if missing:
        line += f" · no {', '.join(missing)} roof" + (" (measure it: nsprof ceilings)" if "L2" in missing else "")
    return line
