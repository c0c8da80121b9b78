"""Exact top-k selection with one tie rule: score descending, then row ascending.

Every lexical back-end ranks with these functions, so "which of two equal
scores comes first" is decided in one place (the lower row index wins) and
the fast index and the ``rank_bm25`` reference can be compared id for id.

Both functions work in time linear in what they scan, not ``n log n``:
``argpartition`` or a threshold finds the winners and only those are sorted.
"""

from __future__ import annotations

import numpy as np

__all__ = ["top_k_rows", "top_k_thresholded"]

_TINY = float(np.nextafter(0.0, 1.0))  # smallest positive float: "score > 0" as "score >= _TINY"


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


def top_k_thresholded(
    scores: np.ndarray, seeds: np.ndarray, k: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Top ``k`` positive entries of each row of a dense ``(n_queries, n_docs)`` score matrix.

    ``seeds`` are flat indices into ``scores`` (``query * n_docs + row``, any
    order, repeats allowed) of documents likely to rank high, e.g. each query
    term's best postings. The k-th best seed score of a query is a lower
    bound on its true k-th best score, so one vectorised comparison against
    it keeps every possible winner, ties included, and drops nearly
    everything else. A query with fewer than ``k`` distinct seeds keeps all
    its positive scores. All queries are handled with a fixed number of
    numpy calls, which is what makes batches cheaper per query.

    Zero means "no matching term": callers must guarantee that matched
    documents score strictly above zero.

    Example:
        >>> s = np.array([[0.0, 2.0, 5.0, 2.0], [1.0, 0.0, 0.0, 0.0]])
        >>> top_k_thresholded(s, np.array([1, 2, 4]), 2)
        [(array([2, 1]), array([5., 2.])), (array([0]), array([1.]))]
    """
    n_q, n_docs = scores.shape
    flat = scores.reshape(-1)
    keys = np.sort(seeds)
    if keys.shape[0]:
        keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]
    q = keys // n_docs
    sc = flat[keys]
    order = np.lexsort((-sc, q))  # by query, then score descending
    q, sc = q[order], sc[order]
    start = np.searchsorted(q, np.arange(n_q))
    rank = np.arange(q.shape[0]) - start[q]
    theta = np.full(n_q, _TINY)
    at_k = rank == k - 1
    theta[q[at_k]] = np.maximum(sc[at_k], _TINY)
    idx = np.flatnonzero(scores >= theta[:, None])  # ascending by query, then row
    qi, rows = np.divmod(idx, n_docs)  # (1-D flatnonzero is several times faster than 2-D nonzero)
    sel = flat[idx]
    order = np.lexsort((rows, -sel, qi))
    qi, rows, sel = qi[order], rows[order], sel[order]
    bounds = np.searchsorted(qi, np.arange(n_q + 1))
    out = []
    for i in range(n_q):
        lo = bounds[i]
        hi = min(bounds[i + 1], lo + k)
        out.append((rows[lo:hi], sel[lo:hi]))
    return out
