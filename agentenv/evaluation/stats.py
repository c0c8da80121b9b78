"""Bootstrap confidence intervals, so leaderboard numbers come with their noise.

Example:
    >>> mean, low, high = bootstrap_ci([1, 0, 1, 1, 0, 1, 1, 1], seed=0)
    >>> round(mean, 3), low <= mean <= high
    (0.75, True)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def bootstrap_ci(
    values: Sequence[float], *, seed: int = 0, resamples: int = 1000, level: float = 0.95
) -> tuple[float, float, float]:
    """Mean and percentile-bootstrap interval; a seeded generator keeps it reproducible."""
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        return float("nan"), float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(data.mean()), float(low), float(high)
