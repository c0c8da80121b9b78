"""Exact top-k selection with one tie rule: score descending, then row ascending.

Every lexical back-end ranks with these functions, so "which of two equal
scores comes first" is decided in one place (the lower row index wins) and
the fast index and the ``rank_bm25`` reference can be compared id for id.

``top_k_rows`` works in time linear in what it scans (``argpartition``
finds the winners, only those are sorted); ``top_k_groups`` sorts the few
candidates of a whole batch of queries at once.
"""

from __future__ import annotations

import numpy as np

__all__ = ["top_k_groups", "top_k_rows"]


def top_k_rows(rows: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Best ``k`` of (row, score) pairs; ``rows`` must be ascending and unique.

    ``argpartition`` finds the top ``k``; only when the (k+1)-th score ties
    the k-th is an exact pass needed to keep the lowest tied rows.

    Example:
        >>> top_k_rows(np.array([0, 1, 2, 3]), np.array([1.0, 3.0, 1.0, 1.0]), 2)
        (array([1, 0]), array([3., 1.]))
    """
    n = scores.shape[0]
    if n > k:
        part = np.argpartition(-scores, k)
        sel = part[:k]
        kth = scores[sel].min()
        if scores[part[k]] == kth:  # a tie straddles the cut: take tied rows in row order
            above = np.flatnonzero(scores > kth)
            tied = np.flatnonzero(scores == kth)[: k - above.shape[0]]
            sel = np.concatenate([above, tied])
        rows, scores = rows[sel], scores[sel]
    order = np.lexsort((rows, -scores))
    return rows[order], scores[order]


def top_k_groups(
    groups: list[tuple[np.ndarray, np.ndarray]], k: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Best ``k`` of each group of (rows, scores), with one ``lexsort`` for all groups.

    Rows within a group must be unique (any order). Sorting every group's
    candidates together by (group, score desc, row asc) replaces a handful
    of numpy calls per group with a fixed handful per batch.

    Example:
        >>> g = [(np.array([4, 2, 9]), np.array([1.0, 5.0, 1.0])), (np.array([7]), np.array([2.0]))]
        >>> top_k_groups(g, 2)
        [(array([2, 4]), array([5., 1.])), (array([7]), array([2.]))]
    """
    if not groups:
        return []
    sizes = [rows.shape[0] for rows, _ in groups]
    group = np.repeat(np.arange(len(groups)), sizes)
    rows = np.concatenate([r for r, _ in groups])
    scores = np.concatenate([s for _, s in groups])
    order = np.lexsort((rows, -scores, group))
    rows, scores = rows[order], scores[order]
    out = []
    lo = 0
    for n in sizes:
        hi = lo + min(n, k)
        out.append((rows[lo:hi], scores[lo:hi]))
        lo += n
    return out
