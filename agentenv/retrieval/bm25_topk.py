"""The exact top-k paths of :class:`~agentenv.retrieval.bm25.BM25Retriever`, over its posting arrays.

Why a module of its own: building and persisting the index is one job, and finding a query's
``k`` best documents fast, and exactly as ``rank_bm25`` ranks them, is another, with its own
invariants (query-order summation, tie order, bounds that may only keep too much).

How a query runs (no Python loop over postings or documents; what costs is
the number of numpy calls, so each path keeps it to about a dozen):

1. one-term queries read the first ``k`` of the term's postings, stored
   pre-sorted by (weight desc, row asc);
2. otherwise, when some query term is *sparse* (no dense row: in at most 1/16
   of the documents), only the documents holding a sparse term are scored
   (:meth:`ExactTopK._sparse_top_k`): their weights are summed in query
   order into a zeroed scratch row (``np.subtract.at`` for sparse terms, a
   gather of the dense rows for frequent ones), only the touched positions are
   read and zeroed again, and one ``lexsort`` of the few best ranks them. A
   document holding only dense terms scores at most the sum of their largest
   weights; the k-th best candidate must beat that bound, or
3. the scores of all documents are summed term by term in query order (a
   dense row add for the few very frequent terms, ``np.add.at`` for the
   rest); each term's ``k`` best postings are seeds: the k-th best seed score
   is a lower bound on the k-th best score, so ``scores >= bound`` keeps every
   possible winner, and one ``lexsort`` ranks the candidates, for a whole
   batch of queries at once.

Every path adds each document's weights in query order starting from 0.0, so its scores are the
same floats as ``rank_bm25``'s; ties go to the lower row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agentenv.retrieval.bm25_scoring import sparse_product
from agentenv.retrieval.topk import top_k_groups, top_k_rows

__all__ = ["ExactTopK"]

_SORT_ALL = 192
"""Up to this many candidates are sorted outright; more are first cut to the k best (and ties)."""


class ExactTopK:
    """The top-k paths, mixed into :class:`~agentenv.retrieval.bm25.BM25Retriever`.

    They read the index's arrays, set by its ``__init__``: ``_bounds`` (``_indptr`` as Python
    ints), ``_indptr``, ``_docs``, ``_weights``, ``_by_weight`` (each term's postings by weight
    desc, row asc), ``_dense_rows`` and ``_dense_max`` (the frequent terms' dense score rows and
    their largest weights), ``_positive`` (every weight > 0), ``_n`` (documents), ``_scratch``
    (zeroed score rows, lent one per query) and ``_int32`` (the int32 postings of batches).
    """

    _bounds: list[int]
    _indptr: np.ndarray
    _docs: np.ndarray
    _weights: np.ndarray
    _by_weight: np.ndarray
    _dense_rows: dict[int, np.ndarray]
    _dense_max: dict[int, float]
    _positive: bool
    _n: int
    _scratch: list[np.ndarray]
    _int32: tuple[np.ndarray, np.ndarray] | None

    def _accumulate(self, terms: list[int], acc: np.ndarray) -> np.ndarray:
        """Add one query's scores into the zeroed row ``acc``, term by term in query order.

        Frequent terms add a precomputed dense row (a vectorised add beats a
        scatter of thousands of postings); rare terms scatter their postings
        with ``np.add.at`` (twice as fast as fancy ``+=``, and exact). Every
        document thus sums its weights in query-token order, starting from
        0.0, exactly as ``rank_bm25.BM25Okapi.get_scores`` does (its added
        zeros change nothing): the scores agree bit for bit.
        """
        bounds, dense_rows, docs, weights = (
            self._bounds,
            self._dense_rows,
            self._docs,
            self._weights,
        )
        for t in terms:
            row = dense_rows.get(t)
            if row is not None:
                acc += row
            else:
                lo, hi = bounds[t], bounds[t + 1]
                np.add.at(acc, docs[lo:hi], weights[lo:hi])
        return acc

    def _candidates(self, terms: list[int], k: int) -> tuple[np.ndarray, np.ndarray]:
        """(rows, scores) of a multi-term query that contain its top ``k``, ties included.

        Seeds are each distinct term's ``k`` best postings; the k-th best
        exact seed score is a lower bound on the k-th best score overall, so
        one vectorised comparison keeps every possible winner and, on the film
        catalog, ~15 documents in all. With non-positive weights (tiny or odd
        corpora) every matched document is kept instead.
        """
        bounds, by_weight, docs = self._bounds, self._by_weight, self._docs
        acc = self._accumulate(terms, np.zeros(self._n))
        if not self._positive:
            mask = np.zeros(self._n, dtype=bool)
            for t in terms:
                mask[docs[bounds[t] : bounds[t + 1]]] = True
            rows = np.flatnonzero(mask)
        else:
            pos: list[int] = []
            for t in set(terms):
                pos.extend(range(bounds[t], min(bounds[t + 1], bounds[t] + k)))
            seeds = sorted(set(docs[by_weight[pos]].tolist()))
            if len(seeds) < k:  # then the seeds are every matched document
                rows = np.asarray(seeds, dtype=np.int64)
            else:
                theta = np.partition(acc[seeds], len(seeds) - k)[len(seeds) - k]
                rows = np.flatnonzero(acc >= theta)
        if rows.shape[0] > 4 * k:  # many ties at the bound: cut down before the shared sort
            return top_k_rows(rows, acc[rows], k)
        return rows, acc[rows]

    def _sparse_top_k(self, terms: list[int], k: int) -> tuple[list[int], list[float]] | None:
        """Exact top ``k`` (rows, scores) of a multi-term query, without a pass over all documents.

        Candidates are the postings of the *sparse* query terms (those without a
        dense row), concatenated. Their exact scores are summed term by term in
        query order, as :meth:`_accumulate` does (so they are the same floats), in a
        zeroed scratch row of which only the candidates are read and zeroed again:
        a fixed dozen numpy calls, each on a few hundred numbers.

        A document holding several sparse terms appears several times among the
        candidates, always with the same score: a dense term is subtracted with
        buffered ``acc[cand] -= row[cand]``, which applies it once per document
        however often ``cand`` repeats it, and the final (score desc, row asc) sort
        puts the copies side by side, where they are dropped. Scores are kept
        negated (``0.0 - a - b`` is exactly ``-(a + b)``) so that one ascending
        ``lexsort`` gives that order.

        A document holding only dense query terms scores at most the sum of those
        terms' largest weights; the k-th best candidate must beat that bound.
        Returns ``None`` when it does not (or there are fewer than ``k``
        candidates), when no query term is sparse, or when weights are not all
        positive: the caller then scores every document (:meth:`_candidates`).
        """
        if not self._positive:
            return None
        bounds, dense_rows, docs, weights, by_weight = (
            self._bounds,
            self._dense_rows,
            self._docs,
            self._weights,
            self._by_weight,
        )
        sparse = [t for t in terms if t not in dense_rows]
        if not sparse:
            return None
        has_dense = len(sparse) < len(terms)
        if has_dense and sum(bounds[t + 1] - bounds[t] for t in set(sparse)) < k:
            return None  # fewer than k candidates: some document holding only dense terms enters
        if len(sparse) == 1:
            cand = docs[bounds[sparse[0]] : bounds[sparse[0] + 1]]
        else:
            cand = np.concatenate([docs[bounds[t] : bounds[t + 1]] for t in sparse])
        # Scores are accumulated negated (subtracting each weight from 0.0 gives exactly
        # the negated sum), so one ascending lexsort ranks them by (score desc, row asc).
        pool = self._scratch
        acc = pool.pop() if pool else np.zeros(self._n)
        if (
            not has_dense
        ):  # one scatter in query order: each document sums its weights in that order
            np.subtract.at(
                acc, cand, np.concatenate([weights[bounds[t] : bounds[t + 1]] for t in sparse])
            )
        else:
            for t in terms:
                row = dense_rows.get(t)
                if row is not None:
                    acc[cand] -= row.take(
                        cand
                    )  # buffered: once per document, even where cand repeats it
                else:
                    lo, hi = bounds[t], bounds[t + 1]
                    np.subtract.at(acc, docs[lo:hi], weights[lo:hi])
        neg = acc.take(cand)
        acc[cand] = (
            0.0  # every position written above is a candidate: the row is zero again (put is 2x slower)
        )
        pool.append(acc)
        # A document appears at most once per sparse query term, so the k best
        # documents fill at most `cut` places of the sorted candidates.
        cut = k * len(sparse)
        sort_all = max(cut, _SORT_ALL)
        if neg.shape[0] > sort_all:
            # Every document scoring below the k-th best weight of one sparse term is out: that
            # term's k best postings are k documents scoring at least that much (weights are
            # positive). One comparison keeps ~50 of ~600 candidates on the film catalog.
            floor = 0.0
            for t in set(sparse):
                lo = bounds[t]
                if bounds[t + 1] - lo >= k:
                    floor = max(floor, weights[by_weight[lo + k - 1]])
            keep = (neg <= -floor).nonzero()[0]
            cand, neg = cand.take(keep), neg.take(keep)
        if neg.shape[0] > sort_all:  # keep the `cut` best (and ties) before sorting
            part = neg.copy()
            part.partition(cut - 1)  # methods, not np.partition/np.flatnonzero: less call overhead
            keep = (neg <= part[cut - 1]).nonzero()[0]
            cand, neg = cand.take(keep), neg.take(keep)
        order = np.lexsort((cand, neg))[:cut]
        rows_out: list[int] = []
        scores_out: list[float] = []
        last = -1
        for row, score in zip(cand.take(order).tolist(), neg.take(order).tolist(), strict=True):
            if row != last:  # copies of one document are adjacent: same score, same row
                last = row
                rows_out.append(row)
                scores_out.append(-score)
                if len(rows_out) == k:
                    break
        if has_dense:  # a document holding only dense terms must not be able to enter
            bound = 0.0
            dense_max = self._dense_max
            for t in terms:
                bound += dense_max.get(t, 0.0)
            if len(rows_out) < k or not scores_out[-1] > bound * (
                1.0 + 1e-9
            ):  # a margin for rounding
                return None
        return rows_out, scores_out

    def _postings_int32(self) -> tuple[np.ndarray, np.ndarray]:
        """(indptr, docs) as int32, the index type of the compiled sparse product, built at the first batch.

        A copy of the rows (4 bytes a posting), held only by processes that search in batches (a server).
        """
        pair = self._int32
        if pair is None:
            pair = self._int32 = (self._indptr.astype(np.int32), self._docs.astype(np.int32))
        return pair

    def _product_top_k(
        self, queries: list[list[int]], k: int
    ) -> list[tuple[list[int], list[float]]]:
        """Exact top ``k`` (rows, scores) of several multi-term queries without dense terms, scored together.

        One sparse matrix product ``Q @ P`` of the batch's query terms (row ``i``
        of ``Q`` holds query ``i``'s terms in query order, a repeated term
        repeated, each with value 1.0) with the postings ``P`` scores every
        document holding a query term, for every query, in one compiled loop.
        SciPy's CSR product (Gustavson's algorithm, ``csr_matmat``) adds, for
        each query row, ``1.0 * weight`` into a zeroed accumulator term by term
        in the row's stored order: each document sums its weights in query
        order from 0.0, the same floats as :meth:`_accumulate` (and
        ``rank_bm25``). Weights are positive, so the product keeps exactly the
        documents holding a term. The compiled routines are called directly:
        the ``@`` operator's checks cost about 0.1 ms a call.

        Each query keeps the documents scoring at least a lower bound on its
        k-th best score (the largest k-th best weight of its terms, read from the
        weight-sorted postings), and one ``lexsort`` ranks all of them by (query,
        score desc, row asc). Cost: the postings the batch touches, plus a fixed
        dozen numpy calls per batch instead of per query.
        """
        indptr = np.zeros(len(queries) + 1, dtype=np.int32)
        np.cumsum([len(terms) for terms in queries], out=indptr[1:])
        terms = np.fromiter((t for q in queries for t in q), dtype=np.int32, count=int(indptr[-1]))
        p_indptr, p_docs = self._postings_int32()
        out_indptr, out_docs, out_scores = sparse_product(
            len(queries),
            self._n,
            indptr,
            terms,
            np.ones(terms.shape[0]),
            p_indptr,
            p_docs,
            self._weights,
        )
        # A lower bound on each query's k-th best score: the k best postings of one of its terms are k
        # documents that score at least the k-th best weight of that term (every weight is positive).
        starts = self._indptr.take(terms)
        kth = np.where(
            self._indptr.take(terms + 1) - starts >= k,
            self._weights.take(
                self._by_weight.take(np.minimum(starts + (k - 1), self._docs.shape[0] - 1))
            ),
            0.0,
        )
        floor = np.maximum.reduceat(kth, indptr[:-1])
        group = np.repeat(np.arange(len(queries)), np.diff(out_indptr))
        keep = (out_scores >= floor.take(group)).nonzero()[
            0
        ]  # every possible winner, ties included
        rows, values, group = (
            out_docs.take(keep).astype(np.intp),
            out_scores.take(keep),
            group.take(keep),
        )
        order = np.lexsort((rows, -values, group))
        rows_list, scores_list = rows.take(order).tolist(), values.take(order).tolist()
        out: list[tuple[list[int], list[float]]] = []
        lo = 0
        for n in np.bincount(group, minlength=len(queries)).tolist():
            top = lo + min(n, k)
            out.append((rows_list[lo:top], scores_list[lo:top]))
            lo += n
        return out

    def _top_k_one(self, terms: list[int], k: int) -> tuple[Any, Any]:
        """Exact top ``k`` (rows, scores; arrays or lists) for one non-empty list of query term ids."""
        if len(terms) == 1:  # postings are pre-sorted by (weight desc, row asc)
            lo, hi = self._bounds[terms[0]], self._bounds[terms[0] + 1]
            pos = self._by_weight[lo : min(hi, lo + k)]
            return self._docs.take(pos), self._weights.take(pos)
        res = self._sparse_top_k(terms, k)
        if res is None:
            res = top_k_groups([self._candidates(terms, k)], k)[0]
        return res

    def _top_k_many(self, queries: list[list[int]], k: int) -> list[tuple[Any, Any]]:
        """Exact top ``k`` (rows, scores) for each list of query term ids.

        One-term queries read their pre-sorted postings. Multi-term queries whose
        terms are all sparse (no dense row) are scored together, by one sparse
        matrix product of the batch's query terms with the postings
        (:meth:`_product_top_k`). The others score only their sparse terms'
        documents (:meth:`_sparse_top_k`) or, failing that, keep a few candidates
        each (:meth:`_candidates`), and a single
        :func:`~agentenv.retrieval.topk.top_k_groups` call ranks the
        candidates of all of those at once.
        """
        out: list[tuple[Any, Any]] = [(self._docs[:0], self._weights[:0])] * len(queries)
        bounds, by_weight, dense_rows = self._bounds, self._by_weight, self._dense_rows
        multi, groups = [], []
        together: list[int] = []
        if self._positive:
            together = [
                i
                for i, terms in enumerate(queries)
                if len(terms) > 1 and not any(t in dense_rows for t in terms)
            ]
            if len(together) > 1:
                for i, res in zip(
                    together, self._product_top_k([queries[i] for i in together], k), strict=True
                ):
                    out[i] = res
                ready = set(together)
                queries = [[] if i in ready else terms for i, terms in enumerate(queries)]
        for i, terms in enumerate(queries):
            if len(terms) == 1:  # postings are pre-sorted by (weight desc, row asc)
                lo, hi = bounds[terms[0]], bounds[terms[0] + 1]
                pos = by_weight[lo : min(hi, lo + k)]
                out[i] = (self._docs.take(pos), self._weights.take(pos))
            elif terms:
                res = self._sparse_top_k(terms, k)
                if res is not None:
                    out[i] = res
                else:
                    multi.append(i)
                    groups.append(self._candidates(terms, k))
        for i, res in zip(multi, top_k_groups(groups, k), strict=True):
            out[i] = res
        return out
