"""Point labels that do not overlap: a greedy search over offsets, in display coordinates.

Points closer together than a marker (v5 and v6 of a ladder at the same speed) first share one
label ("v5, v6"): two labels pointing into one blot cannot be told apart anyway.

Each label tries positions around its point, nearest first (right, right and a little higher or
lower, left, ..., then the corners and above and below, at growing distances), and takes the
first whose box stays inside the axes and clear of every marker and line, every label already
placed and every box the caller asks to avoid (roof labels, say). Where none is clear (a dense
cloud of points), it covers as little of the markers as it can but still never another label.
Labels in crowded places choose first. A label placed away from its point gets a thin leader
line, which must not cross another label either. Call it once the figure's layout and
axis limits are final: positions are computed for that layout.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.axes import Axes
from matplotlib.transforms import Bbox

# Candidate positions in order of preference: the side of the point the label goes to (x, y:
# -1, 0, 1) and a vertical shift in label heights, so that labels of points stacked closer than
# a label's height can still sit beside them.
CANDIDATES = np.array([
    (1, 0, 0), (1, 0, 1 / 3), (1, 0, -1 / 3), (-1, 0, 0), (-1, 0, 1 / 3), (-1, 0, -1 / 3),
    (1, 0, 2 / 3), (1, 0, -2 / 3), (-1, 0, 2 / 3), (-1, 0, -2 / 3),
    (1, 1, 0), (1, -1, 0), (-1, 1, 0), (-1, -1, 0), (0, 1, 0), (0, -1, 0),
])
RADII_PT = np.array([4, 7, 11, 16, 22, 29, 37, 46, 57, 69, 83, 100, 120])
LEADER_FROM_PT = 9  # labels further than this from their point (or shifted a lot) get a leader line
MARKER_PT = 7  # the box kept clear around every point
PAD_PT = 0.6  # room around each label's text


@dataclass(frozen=True)
class Label:
    x: float  # data coordinates of the point
    y: float
    text: str
    color: str = "black"


def place_labels(ax: Axes, labels: list[Label], avoid: Sequence[Bbox] = (), markers: np.ndarray | None = None,
                 hlines: np.ndarray | None = None, fontsize: float = 8.5) -> None:
    """Annotate `ax` with `labels`. `markers` (data coordinates, one row per point) are kept clear
    as well as the labelled points, and so are horizontal lines `hlines` (rows of x0, x1, y in data
    coordinates)."""
    figure = ax.figure
    # matplotlib's stubs type the canvas as FigureCanvasBase; nsprof draws on Agg's, which has get_renderer
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    px = figure.dpi / 72  # pixels per point
    frame = np.asarray(ax.get_window_extent(renderer).padded(-2).extents)
    anchors = ax.transData.transform([(label.x, label.y) for label in labels]) if labels else np.empty((0, 2))
    points = np.vstack([anchors, ax.transData.transform(markers) if markers is not None and len(markers) else np.empty((0, 2))])
    half = MARKER_PT * px / 2
    soft = np.vstack([np.hstack([points - half, points + half]), _line_boxes(ax, hlines, px)])  # may be covered
    avoided = np.array([box.extents for box in avoid]).reshape(-1, 4)
    sizes = [_text_size(ax, label.text, fontsize, renderer) + 2 * PAD_PT * px for label in labels]
    placed = np.empty((0, 4))
    for i in _most_crowded_first(anchors, 30 * px):
        box, leader = _best_position(anchors[i], sizes[i], frame, np.vstack([avoided, placed]), soft, placed, px)
        placed = np.vstack([placed, box])
        center = (box[:2] + box[2:]) / 2
        _annotate(ax, labels[i], (center - anchors[i]) / px, leader, fontsize)


def merge_close(ax: Axes, labels: list[Label], distance_pt: float) -> list[Label]:
    """Labels whose points lie within `distance_pt` of each other (in chains) become one label at
    the first point, texts joined in order."""
    if not labels:
        return []
    anchors = ax.transData.transform([(label.x, label.y) for label in labels])
    reach = distance_pt * ax.figure.dpi / 72
    group = list(range(len(labels)))  # union-find over close pairs

    def root(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    for i in range(len(labels)):
        for j in range(i + 1, len(labels)):
            if np.hypot(*(anchors[i] - anchors[j])) < reach and labels[i].color == labels[j].color:
                group[root(j)] = root(i)
    members: dict[int, list[int]] = {}
    for i in range(len(labels)):
        members.setdefault(root(i), []).append(i)
    return [Label(labels[first].x, labels[first].y, ", ".join(labels[i].text for i in indices), labels[first].color)
            for first, indices in ((indices[0], indices) for indices in members.values())]


def _best_position(anchor: np.ndarray, size: np.ndarray, frame: np.ndarray, hard: np.ndarray, soft: np.ndarray,
                   labels: np.ndarray, px: float) -> tuple[np.ndarray, bool]:
    """The first candidate box (x0, y0, x1, y1) clear of everything; else, of those clear of the
    `hard` boxes and the frame, one whose leader crosses no label, covering least of the `soft`
    boxes; else the one overlapping `hard` least. And whether it needs a leader line."""
    radii = np.repeat(RADII_PT, len(CANDIDATES))
    sides = np.tile(CANDIDATES[:, :2], (len(RADII_PT), 1))
    shifts = np.tile(CANDIDATES[:, 2], len(RADII_PT))
    diagonal = (sides != 0).all(axis=1)
    reach = np.where(diagonal, 0.75, 1.0) * radii * px
    centers = anchor + sides * (reach[:, None] + size / 2) + np.outer(shifts, [0, size[1]])
    boxes = np.hstack([centers - size / 2, centers + size / 2])
    hard_cost = _overlap_areas(boxes, hard).sum(axis=1) + _outside_areas(boxes, frame)
    soft_cost = _overlap_areas(boxes, soft).sum(axis=1)
    leader = (radii > LEADER_FROM_PT) | (np.abs(shifts) > 0.5)
    crossing = leader & _crossings(anchor, centers, labels)
    best = np.lexsort((soft_cost, crossing, hard_cost))[0]  # a stable sort: ties keep the search order
    return boxes[best], bool(leader[best])


def _line_boxes(ax: Axes, hlines: np.ndarray | None, px: float) -> np.ndarray:
    """Horizontal lines as boxes one point high (display coordinates)."""
    if hlines is None or len(hlines) == 0:
        return np.empty((0, 4))
    start = ax.transData.transform(hlines[:, [0, 2]])
    end = ax.transData.transform(hlines[:, [1, 2]])
    return np.column_stack([start[:, 0], start[:, 1] - px / 2, end[:, 0], end[:, 1] + px / 2])


def _overlap_areas(boxes: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Overlap area of each box with each other box: shape (len(boxes), len(others))."""
    width = np.minimum(boxes[:, None, 2], others[None, :, 2]) - np.maximum(boxes[:, None, 0], others[None, :, 0])
    height = np.minimum(boxes[:, None, 3], others[None, :, 3]) - np.maximum(boxes[:, None, 1], others[None, :, 1])
    return np.clip(width, 0, None) * np.clip(height, 0, None)


def _outside_areas(boxes: np.ndarray, frame: np.ndarray) -> np.ndarray:
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    return area - _overlap_areas(boxes, frame[None, :])[:, 0]


def _crossings(start: np.ndarray, ends: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """For each segment from `start` to one of `ends`, whether it passes through any box (sampled
    finely enough for label-sized boxes)."""
    if len(boxes) == 0:
        return np.zeros(len(ends), dtype=bool)
    samples = start + np.linspace(0, 1, 24)[None, :, None] * (ends - start)[:, None, :]  # (ends, 24, 2)
    x, y = samples[..., 0, None], samples[..., 1, None]
    inside = (x > boxes[:, 0]) & (x < boxes[:, 2]) & (y > boxes[:, 1]) & (y < boxes[:, 3])
    return inside.any(axis=(1, 2))


def _most_crowded_first(anchors: np.ndarray, reach: float) -> list[int]:
    if len(anchors) == 0:
        return []
    distances = np.hypot(*(anchors[:, None, :] - anchors[None, :, :]).transpose(2, 0, 1))
    crowding = (distances < reach).sum(axis=1)
    return sorted(range(len(anchors)), key=lambda i: (-crowding[i], i))


def _text_size(ax: Axes, text: str, fontsize: float, renderer) -> np.ndarray:
    probe = ax.text(0, 0, text, fontsize=fontsize, ha="center", va="center")
    extent = probe.get_window_extent(renderer)
    probe.remove()
    return np.array([extent.width, extent.height])


def _annotate(ax: Axes, label: Label, offset_pt: np.ndarray, leader: bool, fontsize: float) -> None:
    ax.annotate(
        label.text, xy=(label.x, label.y), xytext=tuple(offset_pt), textcoords="offset points",
        ha="center", va="center", fontsize=fontsize, color=label.color, zorder=6,
        bbox={"boxstyle": f"square,pad={PAD_PT / fontsize:.3f}", "facecolor": "white", "edgecolor": "none", "alpha": 0.85},
        arrowprops={"arrowstyle": "-", "color": label.color, "linewidth": 0.6, "alpha": 0.8, "shrinkA": 0, "shrinkB": 3}
        if leader else None,
    )
