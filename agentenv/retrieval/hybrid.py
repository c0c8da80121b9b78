"""Hybrid retrieval by weighted reciprocal-rank fusion (RRF).

BM25 scores and cosine similarities live on different scales, so fusing the
scores would need calibration; fusing the ranks does not. RRF (Cormack,
Clarke & Büttcher 2009) gives a document ``Σ_i w_i / (rrf_k + rank_i)`` over
the retrievers that returned it, with 1-based ranks among each retriever's
top ``depth``.

Ties in fused score keep the order in which documents were first met when
reading the result lists rank by rank (rank 1 of every retriever in order,
then rank 2, ...), so the result is deterministic.

Example:
    >>> class Fixed:
    ...     def __init__(self, ids): self.ids = ids
    ...     def search(self, q, k): return [Hit(d, 1.0, i) for i, d in enumerate(self.ids[:k])]
    ...     def search_batch(self, qs, k): return [self.search(q, k) for q in qs]
    >>> h = HybridRetriever([Fixed(["a", "b", "c"]), Fixed(["c", "a"])], rrf_k=60)
    >>> [(x.doc_id, round(x.score * 1e4)) for x in h.search("q", 3)]
    [('a', 325), ('c', 323), ('b', 161)]
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from agentenv.retrieval.base import Hit, Retriever

__all__ = ["HybridRetriever", "rrf_fuse"]


def rrf_fuse(
    result_lists: Sequence[list[Hit]], weights: Sequence[float], rrf_k: float, k: int
) -> list[Hit]:
    """Fuse ranked lists by weighted reciprocal rank (pure function).

    Example:
        >>> a = [Hit("x", 9.0, 0), Hit("y", 8.0, 1)]
        >>> b = [Hit("y", 0.9, 0)]
        >>> [h.doc_id for h in rrf_fuse([a, b], [1.0, 1.0], 60, 2)]
        ['y', 'x']
    """
    fused: dict[str, float] = {}
    depth = max((len(r) for r in result_lists), default=0)
    for rank in range(depth):  # rank-major, so first-met order is the documented tie rule
        for hits, w in zip(result_lists, weights, strict=True):
            if rank < len(hits):
                doc = hits[rank].doc_id
                fused[doc] = fused.get(doc, 0.0) + w / (rrf_k + rank + 1)
    order = sorted(
        fused.items(), key=lambda item: -item[1]
    )  # stable: keeps first-met order on ties
    return [Hit(doc, score, i) for i, (doc, score) in enumerate(order[:k])]


class HybridRetriever:
    """Several retrievers over the same ids, fused by weighted RRF.

    ``rewrites`` gives each retriever its own query, as a function of the
    query asked (``None``: the query as asked); e.g. BM25 reads a question
    better without its question words, while an encoder wants the sentence.
    A rewrite that returns ``None`` keeps its retriever out of that query's
    fusion (an encoder that cannot help with a kind of query, say). Rewrites
    are code, so they are not saved with the index.
    """

    kind = "hybrid"

    def __init__(
        self,
        retrievers: Sequence[Retriever],
        weights: Sequence[float] | None = None,
        rrf_k: float = 60,
        depth: int = 100,
        rewrites: Sequence[Callable[[str], str | None] | None] | None = None,
        version: str = "",
    ) -> None:
        if not retrievers:
            raise ValueError("HybridRetriever needs at least one retriever")
        self.retrievers = list(retrievers)
        self.weights = (
            [1.0] * len(self.retrievers) if weights is None else [float(w) for w in weights]
        )
        if len(self.weights) != len(self.retrievers):
            raise ValueError(f"{len(self.weights)} weights for {len(self.retrievers)} retrievers")
        self.rrf_k = rrf_k
        self.depth = depth
        self.rewrites = list(rewrites) if rewrites is not None else [None] * len(self.retrievers)
        if len(self.rewrites) != len(self.retrievers):
            raise ValueError(f"{len(self.rewrites)} rewrites for {len(self.retrievers)} retrievers")
        self.version = version
        """The version of what the rewrites and the parts' own code return, as their owner numbers
        it (MediaSearch: ``MEDIA_HYBRID_VERSION``); it joins :meth:`ranking_fingerprint`, which cannot hash code."""

    def ranking_fingerprint(self) -> str:
        """sha256 of what decides this fusion's ranking: the parts' kinds, weights, RRF constant,
        depth, the rewrites' names and :attr:`version` (a run's fingerprint part ``retriever``).

        Why: two runs with ``retriever="hybrid-minilm"`` that fused with other weights searched
        differently, though their env options read the same; the run fingerprint keeps them
        off one board (:mod:`agentenv.evaluation.fingerprint`).

        Example:
            >>> class Part:
            ...     def search_batch(self, qs, k): return [[] for _ in qs]
            >>> a = HybridRetriever([Part(), Part()], weights=[1.0, 0.75])
            >>> a.ranking_fingerprint() == HybridRetriever([Part(), Part()], weights=[1.0, 0.75]).ranking_fingerprint()
            True
            >>> a.ranking_fingerprint() == HybridRetriever([Part(), Part()], weights=[1.0, 1.0]).ranking_fingerprint()
            False
        """
        import hashlib

        spec = {
            "parts": [type(r).__name__ for r in self.retrievers],
            "weights": self.weights,
            "rrf_k": self.rrf_k,
            "depth": self.depth,
            "rewrites": [
                None if f is None else f"{f.__module__}.{f.__qualname__}" for f in self.rewrites
            ],
            "version": self.version,
        }
        return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        ids: list[str] | None = None,
        *,
        weights: Sequence[float] | None = None,
        rrf_k: float = 60,
        depth: int = 100,
        bm25: dict[str, object] | None = None,
        dense: dict[str, object] | None = None,
    ) -> HybridRetriever:
        """BM25 + dense (default encoder, flat index); ``bm25``/``dense`` are their ``from_texts`` kwargs."""
        from agentenv.retrieval.bm25 import BM25Retriever
        from agentenv.retrieval.dense import DenseRetriever

        parts = [
            BM25Retriever.from_texts(texts, ids, **(bm25 or {})),  # type: ignore[arg-type]
            DenseRetriever.from_texts(texts, ids, **(dense or {})),  # type: ignore[arg-type]
        ]
        return cls(parts, weights, rrf_k, depth)

    def search(self, query: str, k: int) -> list[Hit]:
        """Fused top ``k`` from each retriever's top ``max(depth, k)``."""
        return self.search_batch([query], k)[0]

    def search_batch(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        """Each retriever answers the whole batch with its own ``search_batch``, then fuse per query."""
        if k <= 0:
            return [[] for _ in queries]
        depth = max(self.depth, k)
        per_retriever = [
            self._part_batch(r, rewrite, queries, depth)
            for r, rewrite in zip(self.retrievers, self.rewrites, strict=True)
        ]
        return [
            rrf_fuse([res[i] for res in per_retriever], self.weights, self.rrf_k, k)
            for i in range(len(queries))
        ]

    @staticmethod
    def _part_batch(
        retriever: Retriever,
        rewrite: Callable[[str], str | None] | None,
        queries: Sequence[str],
        depth: int,
    ) -> list[list[Hit]]:
        """One part's lists for the batch: ``[]`` where its rewrite keeps it out of a query."""
        if rewrite is None:
            return retriever.search_batch(list(queries), depth)
        asked = [rewrite(q) for q in queries]
        kept = [i for i, q in enumerate(asked) if q is not None]
        out: list[list[Hit]] = [[] for _ in queries]
        if kept:
            found = retriever.search_batch([asked[i] for i in kept], depth)  # type: ignore[misc]
            for i, hits in zip(kept, found, strict=True):
                out[i] = hits
        return out

    def save(self, path: str | Path) -> None:
        """Each part in ``part0/``, ``part1/``, ... plus ``hybrid.json``; parts must have ``save``."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        kinds = []
        for i, r in enumerate(self.retrievers):
            r.save(path / f"part{i}")  # type: ignore[attr-defined]
            kinds.append(r.kind)  # type: ignore[attr-defined]
        meta = {
            "kind": self.kind,
            "parts": kinds,
            "weights": self.weights,
            "rrf_k": self.rrf_k,
            "depth": self.depth,
        }
        (path / "hybrid.json").write_text(json.dumps(meta))

    @classmethod
    def load(cls, path: str | Path) -> HybridRetriever:
        """Read what :meth:`save` wrote."""
        from agentenv.retrieval.storage import load_backend

        path = Path(path)
        meta = json.loads((path / "hybrid.json").read_text())
        parts = [load_backend(kind, path / f"part{i}") for i, kind in enumerate(meta["parts"])]
        return cls(parts, meta["weights"], meta["rrf_k"], meta["depth"])

    def __repr__(self) -> str:
        return f"HybridRetriever({self.retrievers!r}, weights={self.weights}, rrf_k={self.rrf_k})"
