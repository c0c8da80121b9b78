"""Means with bootstrap intervals for the lessons: per condition, and for the difference between two conditions.

Why episodes pooled over seeds: each seed's policy is evaluated on its own
seeded sample of test tasks, so the pooled episodes carry both the task and
the seed noise; per-seed means are reported next to them so the spread
between seeds stays visible.

Example:
    >>> m = mean_ci([1.0, 0.0, 1.0, 1.0])
    >>> m["mean"], m["ci"][0] <= m["mean"] <= m["ci"][1]
    (0.75, True)
    >>> diff_ci([3.0, 3.0], [1.0, 1.0])["mean"]
    2.0
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from agentenv.evaluation.stats import bootstrap_ci


def mean_ci(values: Sequence[float], *, seed: int = 0) -> dict[str, object]:
    """``{"mean", "ci": [low, high], "n"}`` with a 95% percentile bootstrap interval."""
    mean, low, high = bootstrap_ci([float(v) for v in values], seed=seed)
    return {"mean": round(mean, 4), "ci": [round(low, 4), round(high, 4)], "n": len(values)}


def diff_ci(
    a: Sequence[float], b: Sequence[float], *, seed: int = 0, resamples: int = 1000
) -> dict[str, object]:
    """Mean of ``a`` minus mean of ``b`` with a 95% bootstrap interval (independent resamples of each)."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.size == 0 or y.size == 0:
        return {"mean": float("nan"), "ci": [float("nan"), float("nan")]}
    rng = np.random.default_rng(seed)
    dx = x[rng.integers(0, x.size, size=(resamples, x.size))].mean(axis=1)
    dy = y[rng.integers(0, y.size, size=(resamples, y.size))].mean(axis=1)
    low, high = np.quantile(dx - dy, [0.025, 0.975])
    return {
        "mean": round(float(x.mean() - y.mean()), 4),
        "ci": [round(float(low), 4), round(float(high), 4)],
    }
