"""The noise floor's rule written out apart from nsprof.diff.noise, for the tests that check it
(issue 59): per class, 1.5 times the largest |change| between two runs whose 95% percentile
interval (scipy.stats.bootstrap of the ratio of medians) excludes 1; 0 where no change was."""

from __future__ import annotations

import numpy as np
from scipy import stats as scipy_stats

Change = tuple[float, np.ndarray, np.ndarray]  # the change in percent, and the two runs' durations


def floors_by_rule(changes: dict[str, list[Change]]) -> dict[str, float]:
    """Per class that held a tested row: 1.5x the largest significant |change| (0 where none was)."""
    floors = {}
    for name, rows in changes.items():
        if rows:
            floors[name] = 0.0
        for change, first, second in sorted(rows, key=lambda row: -abs(row[0])):  # the largest significant one sets it
            interval = scipy_stats.bootstrap((first, second),
                                             lambda x, y, axis: np.median(y, axis=axis) / np.median(x, axis=axis),
                                             method="percentile", n_resamples=4000, vectorized=True,
                                             random_state=1).confidence_interval
            if interval.low > 1 or interval.high < 1:
                floors[name] = 1.5 * abs(change)
                break
    return floors
