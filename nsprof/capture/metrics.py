"""Nsight Compute metric sets as `--metrics` takes them: the catalogue's presets plus raw metric names.

The presets come from nsprof.metric_catalog (each metric names the presets that collect it). Each
preset keeps gpu__time_duration.sum so that every capture can be placed on a roofline.
"""

from __future__ import annotations

from nsprof import metric_catalog
from nsprof.errors import UsageError

PRESETS: dict[str, list[str]] = {name: metric_catalog.preset(name) for name in metric_catalog.PRESETS}


def resolve_metrics(values: list[str] | None) -> list[str]:
    """Expand presets and raw names ("default,smem", "memory,launch__grid_size") in order, without repeats.

    A raw metric name always holds a double underscore (unit__counter); anything else must be a preset.
    """
    tokens = [t.strip() for v in (values or ["default"]) for t in v.split(",") if t.strip()]
    if not tokens:
        raise UsageError("no metric given", f"pass --metrics with a preset ({', '.join(PRESETS)}) or raw ncu metric names")
    metrics: list[str] = []
    for token in tokens:
        if token in PRESETS:
            names = PRESETS[token]
        elif "__" in token:
            names = [token]
        else:
            raise UsageError(f"unknown metric preset '{token}'",
                             f"choose from {', '.join(PRESETS)} or give raw ncu metric names such as dram__bytes_read.sum")
        metrics.extend(n for n in names if n not in metrics)
    return metrics
