"""Retrieval back-ends behind one small interface, and a factory that picks one.

``import agentenv.retrieval`` stays cheap: numpy, scipy, faiss and rank_bm25
are imported by the back-end modules, which load on first use.

=====================  ============================================================
spec                   back-end
=====================  ============================================================
``"bm25"``             :class:`BM25Retriever`, precomputed weights (default, fast)
``"bm25-reference"``   :class:`RankBM25Retriever`, ``rank_bm25`` (the yardstick)
``"dense"``            :class:`DenseRetriever`, encoder + faiss Flat/HNSW
``"hybrid"``           :class:`HybridRetriever`, BM25 + dense by reciprocal rank
``"http://..."``       ``RetrievalClient``: an index served by another process
=====================  ============================================================

Example:
    >>> r = build_retriever("bm25", ["red apple", "blue sky", "green apple"], ["a", "b", "c"])
    >>> [h.doc_id for h in r.search("apple", 5)]
    ['a', 'c']
    >>> isinstance(r, Retriever)
    True
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from agentenv.retrieval.base import Hit, Retriever

if TYPE_CHECKING:
    from agentenv.retrieval.bm25 import BM25Retriever
    from agentenv.retrieval.dense import DenseRetriever
    from agentenv.retrieval.encoders import Encoder, HashedTfidfSvdEncoder, MiniLMEncoder
    from agentenv.retrieval.hybrid import HybridRetriever
    from agentenv.retrieval.reference import RankBM25Retriever
    from agentenv.retrieval.tokenize import Tokenizer

__all__ = [
    "BM25Retriever",
    "DenseRetriever",
    "Encoder",
    "HashedTfidfSvdEncoder",
    "Hit",
    "HybridRetriever",
    "MiniLMEncoder",
    "RankBM25Retriever",
    "Retriever",
    "Tokenizer",
    "build_retriever",
]

_LAZY = {
    "BM25Retriever": "agentenv.retrieval.bm25",
    "RankBM25Retriever": "agentenv.retrieval.reference",
    "DenseRetriever": "agentenv.retrieval.dense",
    "HybridRetriever": "agentenv.retrieval.hybrid",
    "Encoder": "agentenv.retrieval.encoders",
    "HashedTfidfSvdEncoder": "agentenv.retrieval.encoders",
    "MiniLMEncoder": "agentenv.retrieval.encoders",
    "Tokenizer": "agentenv.retrieval.tokenize",
}

_SPECS = {
    "bm25": "BM25Retriever",
    "bm25-reference": "RankBM25Retriever",
    "dense": "DenseRetriever",
    "hybrid": "HybridRetriever",
}


def __getattr__(name: str) -> Any:
    """Import back-end classes on first access (PEP 562) to keep the package import cheap."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentenv.retrieval' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def build_retriever(
    spec: str | Retriever,
    texts: list[str] | None = None,
    ids: list[str] | None = None,
    *,
    corpus_checksum: str | None = None,
    **params: Any,
) -> Retriever:
    """Turn a spec into a ready retriever over ``texts`` (with ``ids``, default ``str(row)``).

    A :class:`Retriever` instance is returned as is; an ``http(s)://`` URL
    becomes a client of a retrieval server. With ``corpus_checksum`` the
    index goes through the on-disk cache (:func:`agentenv.retrieval.cache.cached_index`),
    keyed by that checksum, the spec and ``params``. ``params`` are the
    back-end's ``from_texts`` keyword arguments.
    """
    if not isinstance(spec, str):
        if isinstance(spec, Retriever):
            return spec
        raise TypeError(f"spec must be a name, a URL or a Retriever, not {type(spec).__name__}")
    if spec.startswith(("http://", "https://")):
        from agentenv.retrieval.client import RetrievalClient

        return RetrievalClient(spec, **params)  # type: ignore[no-any-return]
    if spec not in _SPECS:
        raise ValueError(f"unknown retriever spec {spec!r}; use one of {sorted(_SPECS)} or a URL")
    if texts is None:
        raise ValueError(f"retriever {spec!r} needs the corpus texts")
    cls = __getattr__(_SPECS[spec])

    def build() -> Any:
        from agentenv.progress import build_step

        with build_step(f"building the {spec} index over {len(texts):,} documents"):
            return cls.from_texts(list(texts), ids, **params)

    if corpus_checksum is None or spec == "bm25-reference":  # the reference is never cached
        return build()  # type: ignore[no-any-return]
    from agentenv.retrieval.cache import cached_index

    key_params = {
        "ids": _ids_digest(ids, len(texts)),
        "defaults": _default_fingerprints(),
        **params,
    }
    return cached_index(spec, corpus_checksum, key_params, build)  # type: ignore[no-any-return]


def _default_fingerprints() -> list[str]:
    """The default tokenizer and encoder join every cache key, so changing a default rebuilds."""
    from agentenv.retrieval.encoders import HashedTfidfSvdEncoder
    from agentenv.retrieval.tokenize import DEFAULT_TOKENIZER

    return [DEFAULT_TOKENIZER.fingerprint(), HashedTfidfSvdEncoder().fingerprint()]


def _ids_digest(ids: list[str] | None, n: int) -> str:
    """Ids are part of an index: a checksum of them (and the corpus size) joins the cache key."""
    import hashlib

    h = hashlib.sha256(str(n).encode())
    if ids:  # the bytes of one update per id (b"\0" + id), in one call: 17,472 calls were 8 ms of a warm make
        h.update(("\0" + "\0".join(map(str, ids))).encode())
    return h.hexdigest()[:16]
