"""Dense retrieval: an encoder plus a faiss inner-product index.

Vectors are unit length, so inner product is cosine similarity. ``"flat"``
(``IndexFlatIP``) is exact; ``"hnsw"`` (``IndexHNSWFlat``, Malkov & Yashunin
2018) trades a little recall for sub-linear search on large corpora. faiss
is imported only when an index is built or loaded.

Within the ``k`` hits faiss returns, equal scores are ordered by the lower
row index, as in the BM25 back-ends (which of several documents tied at the
cut-off faiss keeps is its own choice).

Example:
    >>> texts = ["space opera", "space station", "pirate ship", "pirate treasure"]
    >>> enc = HashedTfidfSvdEncoder(dim=4, n_features=2**10)
    >>> r = DenseRetriever.from_texts(texts, encoder=enc)
    >>> r.search("pirate", k=2)[0].doc_id in {"2", "3"}
    True
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from agentenv.retrieval.base import Hit, document_ids
from agentenv.retrieval.encoders import Encoder, HashedTfidfSvdEncoder, load_encoder

__all__ = ["DenseRetriever"]

IndexKind = Literal["flat", "hnsw"]
_FORMAT = 1


class DenseRetriever:
    """Encoder + faiss index over a fixed corpus; ``search`` encodes the query and asks faiss."""

    kind = "dense"

    def __init__(self, ids: list[str], encoder: Encoder, index: object, params: dict[str, object]):
        self.ids = ids
        self.encoder = encoder
        self.index = index
        self.params = params
        self._results: OrderedDict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._lock = threading.Lock()
        if params.get("index") == "hnsw":
            index.hnsw.efSearch = int(params["ef_search"])  # type: ignore[attr-defined]

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        ids: list[str] | None = None,
        *,
        encoder: Encoder | None = None,
        index: IndexKind = "flat",
        hnsw_m: int = 32,
        ef_construction: int = 200,
        ef_search: int = 256,
    ) -> DenseRetriever:
        """Embed ``texts`` with ``encoder`` and index them.

        The default encoder is a :class:`HashedTfidfSvdEncoder` fitted on
        ``texts``; an encoder passed in is fitted on ``texts`` only if it is
        not fitted yet (its ``fitted`` attribute), so one fitted encoder can
        serve several indexes.
        """
        ids = document_ids(ids, len(texts))
        encoder = encoder if encoder is not None else HashedTfidfSvdEncoder()
        if not getattr(encoder, "fitted", False):
            encoder.fit(texts)
        # A corpus may be encoded otherwise than queries (the MiniLM encoder cuts documents short).
        vectors = getattr(encoder, "encode_documents", encoder.encode)(texts)
        params = {
            "index": index,
            "hnsw_m": hnsw_m,
            "ef_construction": ef_construction,
            "ef_search": ef_search,
            "encoder": encoder.fingerprint(),
        }
        return cls(ids, encoder, _build_index(vectors, index, hnsw_m, ef_construction), params)

    def reindexed(
        self,
        index: IndexKind,
        *,
        hnsw_m: int = 32,
        ef_construction: int = 200,
        ef_search: int = 256,
    ) -> DenseRetriever:
        """The same vectors (not re-encoded) under another faiss index, e.g. an HNSW graph over a flat index."""
        vectors = self.index.reconstruct_n(0, self.index.ntotal)  # type: ignore[attr-defined]
        params = {
            **self.params,
            "index": index,
            "hnsw_m": hnsw_m,
            "ef_construction": ef_construction,
            "ef_search": ef_search,
        }
        built = _build_index(vectors, index, hnsw_m, ef_construction)
        return type(self)(self.ids, self.encoder, built, params)

    def search(self, query: str, k: int) -> list[Hit]:
        """Top ``k`` documents by cosine similarity to the encoded query."""
        return self.search_batch([query], k)[0]

    def search_batch(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        """Encode all queries at once and ask faiss for all of them in one call.

        With an encoder that caches query embeddings (its ``query_cache`` size), what faiss
        returns for a query is cached too (as many queries, LRU, keyed by query and ``k``;
        about 1.2 kB each at ``k=100``): the index is read-only and faiss answers a vector
        the same way each time, so a repeated query gets the same hits without the graph
        search (1 ms of a 1.5 ms cached ``hybrid-minilm`` search).
        """
        if k <= 0 or not queries:
            return [[] for _ in queries]
        k = min(k, len(self.ids))
        size = int(getattr(self.encoder, "query_cache", 0) or 0)
        if not size:
            scores, rows = self.index.search(self.encoder.encode(list(queries)), k)  # type: ignore[attr-defined]
            return [self._hits(r, s) for r, s in zip(rows, scores, strict=True)]
        found: list[tuple[np.ndarray, np.ndarray] | None] = [None] * len(queries)
        with self._lock:
            for i, query in enumerate(queries):
                got = self._results.get((query, k))
                if got is not None:
                    self._results.move_to_end((query, k))
                    found[i] = got
        todo = [i for i, got in enumerate(found) if got is None]
        if todo:
            q = self.encoder.encode([queries[i] for i in todo])
            scores, rows = self.index.search(q, k)  # type: ignore[attr-defined]
            with self._lock:
                for i, r, s in zip(todo, rows, scores, strict=True):
                    found[i] = (r, s)
                    self._results[(queries[i], k)] = (r, s)
                while len(self._results) > size:
                    self._results.popitem(last=False)
        return [self._hits(r, s) for r, s in found]  # type: ignore[misc]

    def clear_query_cache(self, *, keep_embeddings: bool = False) -> None:
        """Forget every cached query's hits, and its embedding unless ``keep_embeddings`` (benchmarks time the search this way)."""
        with self._lock:
            self._results.clear()
        if not keep_embeddings:
            getattr(self.encoder, "clear_query_cache", lambda: None)()

    def _hits(self, rows: np.ndarray, scores: np.ndarray) -> list[Hit]:
        keep = rows >= 0  # faiss pads with -1 when fewer results exist
        rows, scores = rows[keep], scores[keep].astype(np.float64)
        order = np.lexsort((rows, -scores))
        ids = self.ids
        return [
            Hit(ids[r], s, i)
            for i, (r, s) in enumerate(
                zip(rows[order].tolist(), scores[order].tolist(), strict=True)
            )
        ]

    def nbytes(self) -> int:
        """Approximate bytes: the faiss index as serialised (vectors, graph) plus the encoder's state."""
        import faiss

        encoder_bytes = getattr(self.encoder, "nbytes", lambda: 0)()
        return int(faiss.serialize_index(self.index).nbytes) + int(encoder_bytes)

    def save(self, path: str | Path) -> None:
        """Write ``dense.json``, ``index.faiss`` and the encoder into a directory."""
        import faiss

        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        faiss.write_index(self.index, str(path / "index.faiss"))
        self.encoder.save(path / "encoder")
        meta = {"kind": self.kind, "format": _FORMAT, "params": self.params, "ids": self.ids}
        (path / "dense.json").write_text(json.dumps(meta, ensure_ascii=False))

    @classmethod
    def load(cls, path: str | Path) -> DenseRetriever:
        """Read what :meth:`save` wrote."""
        import faiss

        path = Path(path)
        meta = json.loads((path / "dense.json").read_text())
        if meta.get("kind") != cls.kind or meta.get("format") != _FORMAT:
            raise ValueError(f"{path} does not hold a dense index of format {_FORMAT}")
        index = faiss.read_index(str(path / "index.faiss"))
        return cls(meta["ids"], load_encoder(path / "encoder"), index, meta["params"])

    def __repr__(self) -> str:
        return f"DenseRetriever(n_docs={len(self.ids)}, {self.params})"


def _build_index(vectors: np.ndarray, kind: IndexKind, hnsw_m: int, ef_construction: int) -> object:
    import faiss

    dim = vectors.shape[1]
    if kind == "flat":
        index = faiss.IndexFlatIP(dim)
    elif kind == "hnsw":
        index = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = ef_construction
    else:
        raise ValueError(f"unknown index {kind!r}; use 'flat' or 'hnsw'")
    index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return index
