"""Chance-corrected agreement: Fleiss' kappa across many raters, Cohen's kappa between two.

Why kappa and not raw agreement: a judge that says "yes" to 90% of answers
agrees with itself 82% of the time by chance alone; kappa subtracts that.
Both are 1 for perfect agreement, 0 for agreement at chance level, and
negative below it. They are undefined (``nan``) when every rating falls in
one category, since chance then explains everything.

Formulas:

* Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
  *Psychological Bulletin*, 76(5), 378-382. With N items, n raters per item,
  and n_ij raters putting item i in category j:
  P_i = (sum_j n_ij^2 - n) / (n (n - 1)), P = mean_i P_i,
  p_j = sum_i n_ij / (N n), P_e = sum_j p_j^2, kappa = (P - P_e) / (1 - P_e).
* Cohen, J. (1960). A coefficient of agreement for nominal scales.
  *Educational and Psychological Measurement*, 20(1), 37-46.
  kappa = (p_o - p_e) / (1 - p_e), with p_o the observed agreement and p_e
  the agreement expected from each rater's own category rates.

Example:
    >>> fleiss_kappa([[True, True, True], [False, False, False]])
    1.0
    >>> round(fleiss_kappa([[True, False], [False, True], [True, True], [False, False]]), 4)
    0.0
    >>> cohen_kappa([True, False, True, False], [True, False, False, True])
    0.0
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence


def fleiss_kappa(ratings: Sequence[Sequence[Hashable]]) -> float:
    """Fleiss' kappa of ``ratings[item][rater]``; every item needs the same number (>= 2) of raters."""
    if not ratings:
        raise ValueError("fleiss_kappa needs at least one item")
    n = len(ratings[0])
    if n < 2 or any(len(row) != n for row in ratings):
        raise ValueError(
            f"every item needs the same number (>= 2) of ratings, got {sorted({len(r) for r in ratings})}"
        )
    categories = sorted({c for row in ratings for c in row}, key=repr)
    totals = dict.fromkeys(categories, 0)
    agreement = 0.0
    for row in ratings:
        counts = dict.fromkeys(categories, 0)
        for c in row:
            counts[c] += 1
            totals[c] += 1
        agreement += (sum(k * k for k in counts.values()) - n) / (n * (n - 1))
    p_bar = agreement / len(ratings)
    p_e = sum((t / (len(ratings) * n)) ** 2 for t in totals.values())
    return _chance_corrected(p_bar, p_e)


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa between two raters' labels of the same items."""
    if len(a) != len(b) or not a:
        raise ValueError(
            f"cohen_kappa needs two equally long, non-empty label lists, got {len(a)} and {len(b)}"
        )
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / len(a)
    expected = sum(
        (list(a).count(c) / len(a)) * (list(b).count(c) / len(b)) for c in set(a) | set(b)
    )
    return _chance_corrected(observed, expected)


def _chance_corrected(observed: float, expected: float) -> float:
    if math.isclose(expected, 1.0):
        return math.nan
    return round((observed - expected) / (1.0 - expected), 12)
