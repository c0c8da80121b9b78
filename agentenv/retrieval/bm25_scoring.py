"""BM25's pure scoring helpers: IDF values and a compiled sparse matrix product.

Why apart: both are pure functions of arrays, shared by the fast index
(:mod:`agentenv.retrieval.bm25`) and testable alone; the IDF formulas are the
ones :mod:`agentenv.retrieval.bm25` documents (``okapi`` as ``rank_bm25``,
``lucene`` always positive).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np

__all__ = ["IdfKind", "idf_values"]

IdfKind = Literal["okapi", "lucene"]


def idf_values(doc_freq: Sequence[int], n_docs: int, kind: IdfKind, epsilon: float) -> np.ndarray:
    """IDF of each term from its document frequency (pure function).

    Uses ``math.log`` term by term and a left-to-right sum so that the
    ``okapi`` values equal ``rank_bm25``'s bit for bit (numpy's vectorised
    log may differ in the last bit).

    Example:
        >>> idf_values([1, 3], 4, "okapi", 0.25).round(4).tolist()
        [0.8473, 0.0]
        >>> idf_values([1, 3], 4, "lucene", 0.25).round(4).tolist()
        [1.204, 0.3567]
    """
    if kind == "okapi":
        idf = [math.log(n_docs - n + 0.5) - math.log(n + 0.5) for n in doc_freq]
        total = 0.0
        for v in idf:
            total += v
        eps = epsilon * (total / len(idf)) if idf else 0.0
        idf = [eps if v < 0 else v for v in idf]
    elif kind == "lucene":
        idf = [math.log(1 + (n_docs - n + 0.5) / (n + 0.5)) for n in doc_freq]
    else:
        raise ValueError(f"unknown idf {kind!r}; use 'okapi' or 'lucene'")
    return np.asarray(idf, dtype=np.float64)


def sparse_product(
    n_rows: int,
    n_cols: int,
    a_indptr: np.ndarray,
    a_indices: np.ndarray,
    a_data: np.ndarray,
    b_indptr: np.ndarray,
    b_indices: np.ndarray,
    b_data: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR ``A @ B`` as (indptr, indices, data), with SciPy's compiled routines (int32 indices).

    Each row's entries come in the order the routine finds them (not sorted), with exact zeros
    dropped. Uses ``scipy.sparse._sparsetools`` directly (private, but unchanged for years), or the
    public ``@`` where that module is missing.

    Example:
        >>> a = (np.array([0, 2], np.int32), np.array([0, 1], np.int32), np.ones(2))
        >>> b = (np.array([0, 1, 3], np.int32), np.array([2, 0, 2], np.int32), np.array([0.5, 1.0, 2.0]))
        >>> indptr, indices, data = sparse_product(1, 3, *a, *b)
        >>> sorted(zip(indices.tolist(), data.tolist()))
        [(0, 1.0), (2, 2.5)]
    """
    try:
        from scipy.sparse import _sparsetools
    except ImportError:  # pragma: no cover - a SciPy without the private module
        from scipy.sparse import csr_matrix

        a = csr_matrix((a_data, a_indices, a_indptr), shape=(n_rows, b_indptr.shape[0] - 1))
        c = a @ csr_matrix((b_data, b_indices, b_indptr), shape=(b_indptr.shape[0] - 1, n_cols))
        return c.indptr, c.indices, c.data
    nnz = _sparsetools.csr_matmat_maxnnz(n_rows, n_cols, a_indptr, a_indices, b_indptr, b_indices)
    out_indptr = np.empty(n_rows + 1, dtype=np.int32)
    out_indices = np.empty(nnz, dtype=np.int32)
    out_data = np.empty(nnz, dtype=np.float64)
    _sparsetools.csr_matmat(
        n_rows,
        n_cols,
        a_indptr,
        a_indices,
        a_data,
        b_indptr,
        b_indices,
        b_data,
        out_indptr,
        out_indices,
        out_data,
    )
    used = int(out_indptr[-1])
    return out_indptr, out_indices[:used], out_data[:used]
