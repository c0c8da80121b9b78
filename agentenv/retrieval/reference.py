"""``rank_bm25`` behind the :class:`~agentenv.retrieval.base.Retriever` interface.

This is the yardstick, not a back-end to serve from: ``BM25Okapi`` scores
every document in Python for each query term (tens of milliseconds a query
on the film catalog). The tests build it with the same tokenizer and
parameters as :class:`~agentenv.retrieval.bm25.BM25Retriever` and require
the same top-k ids and scores; both return only documents that contain a
query term, ties broken by the lower row index
(:func:`~agentenv.retrieval.topk.top_k_rows`).

Example:
    >>> r = RankBM25Retriever.from_texts(["a red apple pie", "the night sky", "green apples",
    ...                                    "a blue sky", "moon and stars", "wind", "sea"])
    >>> [(h.doc_id, round(h.score, 3)) for h in r.search("apple sky", k=10)]
    [('1', 0.762), ('2', 0.762), ('3', 0.762), ('0', 0.617)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from agentenv.retrieval.base import Hit
from agentenv.retrieval.bm25 import BM25Base
from agentenv.retrieval.tokenize import Tokenizer
from agentenv.retrieval.topk import top_k_rows

__all__ = ["RankBM25Retriever"]


class RankBM25Retriever(BM25Base):
    """Adapter over ``rank_bm25.BM25Okapi`` (only its ``okapi`` IDF exists there).

    Built like :class:`~agentenv.retrieval.bm25.BM25Retriever` (``from_texts``
    and ``from_tokens`` come from their shared base), so both take the same
    parameters and tokenize the same way.
    """

    kind = "bm25-reference"

    def __init__(
        self, model: object, ids: list[str], tokenizer: Tokenizer, params: dict[str, object]
    ):
        self.model = model
        self.ids = ids
        self.tokenizer = tokenizer
        self.params = params
        # Which rows hold each term, from rank_bm25's own per-document counts.
        self._rows_with: dict[str, list[int]] = {}
        for row, freqs in enumerate(model.doc_freqs):  # type: ignore[attr-defined]
            for term in freqs:
                self._rows_with.setdefault(term, []).append(row)

    @classmethod
    def _index(
        cls, corpus: list[list[str]], ids: list[str], params: dict[str, Any], tokenizer: Tokenizer
    ) -> RankBM25Retriever:
        """Hand the corpus to ``BM25Okapi``, which has only the ``okapi`` IDF."""
        from rank_bm25 import BM25Okapi

        if params["idf"] != "okapi":
            raise ValueError("rank_bm25.BM25Okapi only implements idf='okapi'")
        model = BM25Okapi(corpus, k1=params["k1"], b=params["b"], epsilon=params["epsilon"])
        return cls(model, ids, tokenizer, params)

    def scores(self, query: str) -> np.ndarray:
        """``BM25Okapi.get_scores`` on the tokenized query."""
        return np.asarray(self.model.get_scores(self.tokenizer(query)))  # type: ignore[attr-defined]

    def search_tokens(self, tokens: list[str], k: int) -> list[Hit]:
        """Top ``k`` for an already-tokenized query."""
        if k <= 0:
            return []
        scores = np.asarray(self.model.get_scores(tokens))  # type: ignore[attr-defined]
        matched: set[int] = set()
        for t in set(tokens):
            matched.update(self._rows_with.get(t, ()))
        rows = np.array(sorted(matched), dtype=np.int64)
        rows, sc = top_k_rows(rows, scores[rows], k)
        return [
            Hit(self.ids[r], s, i)
            for i, (r, s) in enumerate(zip(rows.tolist(), sc.tolist(), strict=True))
        ]

    def search_batch(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        """``search`` for each query (``rank_bm25`` has no faster batch path)."""
        return [self.search(q, k) for q in queries]
