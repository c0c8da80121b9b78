"""BM25 over precomputed term weights: the default, fast lexical back-end.

Why precompute: a BM25 score is a sum, over query terms, of a weight that
depends only on (term, document). Computing every weight once at build time
turns a query into "look up a few posting lists and add them up", which is
a handful of numpy calls instead of a pass over the corpus.

Scoring (Robertson & Walker's Okapi BM25, in the form of the ATIRE variant
as implemented by ``rank_bm25.BM25Okapi``; Trotman, Puurula & Burgess 2014,
"Improvements to BM25 and Language Models Examined")::

    score(q, d) = Σ_{t in q} idf(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))

* ``idf="okapi"``: ``ln(N − n + 0.5) − ln(n + 0.5)``; a negative value (a term
  in more than half the documents) is replaced by ``epsilon · mean(idf)``,
  exactly as ``rank_bm25`` does.
* ``idf="lucene"``: ``ln(1 + (N − n + 0.5)/(n + 0.5))`` (always positive).

A query term counts once per occurrence in the query, like ``rank_bm25``.
Weights are computed with the same floating-point operations, in the same
order, as ``rank_bm25``, so scores agree bit for bit on the same tokens.

How a query runs: :mod:`agentenv.retrieval.bm25_topk` (one-term queries read pre-sorted
postings; otherwise only the documents of the sparse query terms are scored, or every document
with a lower bound on the k-th best score). Every path adds each document's weights in query
order starting from 0.0, so its scores are the same floats as ``rank_bm25``'s.

Result rules, shared with :class:`~agentenv.retrieval.reference.RankBM25Retriever`:

* only documents containing at least one query term are returned, so a
  query with fewer than ``k`` matching documents returns fewer than ``k``
  hits (and a query with no known term returns ``[]``);
* ties in score are broken by the lower row index (corpus order) first.

Example:
    >>> texts = ["a red apple pie", "the night sky", "green apples", "a blue sky",
    ...          "moon and stars", "wind", "sea"]
    >>> r = BM25Retriever.from_texts(texts)
    >>> [(h.doc_id, round(h.score, 3)) for h in r.search("apple sky", k=10)]
    [('1', 0.762), ('2', 0.762), ('3', 0.762), ('0', 0.617)]
    >>> r.search("banana", k=3)
    []
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from agentenv.retrieval.base import Hit
from agentenv.retrieval.bm25_base import BM25Base, BM25Params
from agentenv.retrieval.bm25_scoring import IdfKind, idf_values
from agentenv.retrieval.bm25_topk import ExactTopK
from agentenv.retrieval.tokenize import Tokenizer

__all__ = ["BM25Base", "BM25Params", "BM25Retriever", "IdfKind", "idf_values"]

_FORMAT = 1


class BM25Retriever(ExactTopK, BM25Base):
    """Okapi BM25 with weights precomputed into term-major posting arrays (CSR).

    ``_indptr[t]:_indptr[t+1]`` delimits term ``t``'s postings in ``_docs``
    (row indices, ascending) and ``_weights`` (the term's BM25 weight in
    each document). Building, loading, the query API and persistence are
    here; the exact top-k paths over those arrays are :class:`ExactTopK`'s.
    """

    kind = "bm25"

    def __init__(
        self,
        ids: list[str],
        vocab: dict[str, int],
        indptr: np.ndarray,
        docs: np.ndarray,
        weights: np.ndarray,
        params: dict[str, object],
        tokenizer: Tokenizer,
        by_weight: np.ndarray | None = None,
    ) -> None:
        self.ids = ids
        self.params = params
        self.tokenizer = tokenizer
        self._vocab = vocab
        self._indptr = indptr
        self._bounds = indptr.tolist()  # Python ints: cheaper to slice with than numpy scalars
        # Row indices as intp (stored as int32): numpy converts any other index type on every use.
        self._docs = docs.astype(np.intp, copy=False)
        docs = self._docs
        self._weights = weights
        self._n = len(ids)
        # With strictly positive weights, a seed's score bounds the k-th best
        # from below (see _candidates).
        self._positive = bool(weights.size == 0 or weights.min() > 0)
        df = np.diff(indptr)
        # Per term: postings ordered by (weight desc, row asc), for top-k seeds. Saved with the
        # index, since sorting them again was a third of a warm gym.make.
        if by_weight is None:
            term_of = np.repeat(np.arange(len(vocab)), df)
            in_row_order = bool(np.all((np.diff(docs) > 0) | (np.diff(term_of) != 0)))
            # lexsort is stable: postings already in row order within each term need no row key.
            keys = (-weights, term_of) if in_row_order else (docs, -weights, term_of)
            by_weight = np.lexsort(keys)
        self._by_weight = by_weight.astype(np.intp, copy=False)
        # Dense rows for the terms in more than 1/16 of the documents, most
        # frequent first, holding at most as many values as the postings.
        self._dense_rows: dict[int, np.ndarray] = {}
        frequent = np.flatnonzero(df * 16 > self._n)
        for t in frequent[np.argsort(-df[frequent], kind="stable")].tolist():
            if (len(self._dense_rows) + 1) * self._n > docs.shape[0]:
                break
            row = np.zeros(self._n)
            row[docs[indptr[t] : indptr[t + 1]]] = weights[indptr[t] : indptr[t + 1]]
            self._dense_rows[t] = row
        # The largest weight of each dense term: bounds what a document holding
        # only dense query terms can score (see _sparse_top_k).
        self._dense_max = {t: float(row.max()) for t, row in self._dense_rows.items()}
        # Zeroed score rows lent to one query at a time (a list: pop/append are atomic).
        self._scratch: list[np.ndarray] = []
        self._word_terms: dict[str, int] = {}  # word -> term id or -1 (see _query_terms)
        self._int32: tuple[np.ndarray, np.ndarray] | None = (
            None  # for batches (see _postings_int32)
        )

    # ------------------------------------------------------------------ build
    @classmethod
    def _index(
        cls, corpus: list[list[str]], ids: list[str], params: dict[str, Any], tokenizer: Tokenizer
    ) -> BM25Retriever:
        """Count terms, weigh every (term, document) pair once, and store the postings term-major."""
        n = len(corpus)
        k1, b, epsilon = params["k1"], params["b"], params["epsilon"]
        flat = list(chain.from_iterable(corpus))
        # First-appearance order, as rank_bm25 iterates its dict.
        vocab: dict[str, int] = {t: i for i, t in enumerate(dict.fromkeys(flat))}
        doc_len = np.fromiter(map(len, corpus), dtype=np.int64, count=n)
        terms = np.fromiter(map(vocab.__getitem__, flat), dtype=np.int64, count=len(flat))
        rows = np.repeat(np.arange(n, dtype=np.int64), doc_len)
        # Unique (term, row) pairs sorted term-major; counts are the term frequencies.
        keys, tf = np.unique(terms * n + rows, return_counts=True)
        post_terms, post_docs = np.divmod(keys, n)
        df = np.bincount(post_terms, minlength=len(vocab))
        idf_arr = idf_values(df.tolist(), n, params["idf"], epsilon)
        avgdl = int(doc_len.sum()) / n  # Python int / int, as rank_bm25 computes it
        dl = doc_len[post_docs]
        tf = tf.astype(np.float64)
        if avgdl > 0:
            # Same expression, same evaluation order as rank_bm25.BM25Okapi.get_scores.
            weights = idf_arr[post_terms] * (tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)))
        else:
            weights = np.zeros(0)
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        return cls(ids, vocab, indptr, post_docs, weights, params, tokenizer)

    # ----------------------------------------------------------------- search
    def _term_ids(self, tokens: list[str]) -> list[int]:
        """Term ids of the query tokens found in the vocabulary, in query order."""
        vocab = self._vocab
        return [i for i in map(vocab.get, tokens) if i is not None]

    def _query_terms(self, query: str) -> list[int]:
        """``_term_ids(tokenizer(query))`` in one pass over the words, each word's term id memoised.

        Why: a whole question pasted into the search box has a dozen words, and tokenizing
        then looking each token up cost about a tenth of a search step. A word's id is -1
        when it is dropped or not in the vocabulary; the memo is per process and bounded.
        """
        memo = self._word_terms
        out = []
        for w in self.tokenizer.words(query):
            t = memo.get(w)
            if t is None:
                token = self.tokenizer.word_token(w)
                t = self._vocab.get(token, -1) if token else -1
                if len(memo) < 1_000_000:  # bound the memo on adversarial input
                    memo[w] = t
            if t >= 0:
                out.append(t)
        return out

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document (zero where no term matches), like ``get_scores``."""
        return self._accumulate(self._query_terms(query), np.zeros(self._n))

    def _hits(self, rows: np.ndarray | list[int], scores: np.ndarray | list[float]) -> list[Hit]:
        ids, new = (
            self.ids,
            tuple.__new__,
        )  # direct construction: NamedTuple's own __new__ is Python code
        if type(rows) is not list:
            rows, scores = rows.tolist(), scores.tolist()  # type: ignore[union-attr]
        return [new(Hit, (ids[r], s, i)) for i, (r, s) in enumerate(zip(rows, scores, strict=True))]

    def search(self, query: str, k: int) -> list[Hit]:
        """Top ``k`` documents containing a query term, best first (ties: lower row first)."""
        if k <= 0:
            return []
        terms = self._query_terms(query)
        return self._hits(*self._top_k_one(terms, k)) if terms else []

    def search_tokens(self, tokens: list[str], k: int) -> list[Hit]:
        """Top ``k`` for an already-tokenized query."""
        terms = self._term_ids(tokens)
        if k <= 0 or not terms:
            return []
        return self._hits(*self._top_k_one(terms, k))

    def query_work(self, query: str) -> int:
        """How many postings a search of ``query`` reads at most: the sum of its terms' document counts.

        What a batch costs is capped by this (:class:`~agentenv.retrieval.batching.MicroBatcher`), not
        by its number of queries: a query of frequent terms reads thousands of times more than a title.

        Example:
            >>> BM25Retriever.from_texts(["red apple", "red sky", "blue sky"]).query_work("red sky, red")
            6
        """
        bounds = self._bounds
        return sum(bounds[t + 1] - bounds[t] for t in self._query_terms(query))

    def search_batch(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        """``search`` for every query (the queries that must score every document share one final sort)."""
        if k <= 0:
            return [[] for _ in queries]
        results = self._top_k_many([self._query_terms(q) for q in queries], k)
        return [self._hits(rows, sc) for rows, sc in results]

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_scratch"] = []  # scratch rows are per process; no need to copy them
        state["_word_terms"] = {}  # a memo: rebuilt as words are met
        state["_int32"] = None  # rebuilt from the postings at the first batch
        return state

    # ---------------------------------------------------------------- persist
    def nbytes(self) -> int:
        """Approximate memory of the index: arrays plus the vocabulary and id strings."""
        arrays = (
            self._indptr.nbytes + self._docs.nbytes + self._weights.nbytes + self._by_weight.nbytes
        )
        arrays += sum(row.nbytes for row in self._dense_rows.values())
        strings = sum(len(t) + 57 for t in self._vocab) + sum(len(i) + 57 for i in self.ids)
        return arrays + strings + 100 * len(self._vocab)  # ~dict slot + int object per term

    def save(self, path: str | Path) -> None:
        """Write the index to a directory (created if needed)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        np.save(path / "indptr.npy", self._indptr)
        np.save(path / "docs.npy", self._docs.astype(np.int32))  # the on-disk format since format 1
        np.save(path / "weights.npy", self._weights)
        np.save(path / "by_weight.npy", self._by_weight.astype(np.int32))
        meta = {
            "kind": self.kind,
            "format": _FORMAT,
            "params": self.params,
            "tokenizer": self.tokenizer.params(),
            "ids": self.ids,
            "vocab": list(self._vocab),
        }
        (path / "bm25.json").write_text(json.dumps(meta, ensure_ascii=False))

    @classmethod
    def load(cls, path: str | Path) -> BM25Retriever:
        """Read an index written by :meth:`save`."""
        path = Path(path)
        meta = json.loads((path / "bm25.json").read_text())
        if meta.get("kind") != cls.kind or meta.get("format") != _FORMAT:
            raise ValueError(f"{path} does not hold a bm25 index of format {_FORMAT}")
        vocab = dict(zip(meta["vocab"], range(len(meta["vocab"])), strict=True))
        arrays = [
            np.load(path / f"{name}.npy", allow_pickle=False)
            for name in ("indptr", "docs", "weights")
        ]
        sorted_path = (
            path / "by_weight.npy"
        )  # absent from indexes saved before it was kept: sorted at load
        by_weight = np.load(sorted_path, allow_pickle=False) if sorted_path.exists() else None
        return cls(
            meta["ids"], vocab, *arrays, meta["params"], Tokenizer(**meta["tokenizer"]), by_weight
        )

    def __repr__(self) -> str:
        return f"BM25Retriever(n_docs={self._n}, n_terms={len(self._vocab)}, {self.params})"
