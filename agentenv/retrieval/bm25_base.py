"""How every BM25 back-end is built: the shared parameters and constructor.

Why apart: the fast index (:class:`~agentenv.retrieval.bm25.BM25Retriever`)
and the ``rank_bm25`` yardstick (:mod:`agentenv.retrieval.reference`) must
take the same parameters and tokenize texts in exactly one way; this module
holds that one way and nothing about how either scores.
"""

from __future__ import annotations

import gc
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

from agentenv.retrieval.base import Hit, document_ids
from agentenv.retrieval.bm25_scoring import IdfKind
from agentenv.retrieval.tokenize import DEFAULT_TOKENIZER, Tokenizer

if TYPE_CHECKING:  # pragma: no cover - typing only (typing has them from Python 3.11)
    from typing_extensions import Self, Unpack

__all__ = ["BM25Base", "BM25Params"]


class BM25Params(TypedDict, total=False):
    """The BM25 parameters every BM25 back-end takes (see :meth:`BM25Base.from_tokens`)."""

    k1: float
    b: float
    epsilon: float
    idf: IdfKind


class BM25Base(ABC):
    """How a BM25 back-end is built: the one constructor both BM25 back-ends share.

    Why shared: the fast index and the ``rank_bm25`` yardstick are compared
    on the same tokens with the same parameters, so they must take them, and
    tokenize texts, in exactly one way. A subclass supplies :meth:`_index`.
    """

    kind: ClassVar[str]
    ids: list[str]
    tokenizer: Tokenizer

    @classmethod
    def from_texts(
        cls,
        texts: Sequence[str],
        ids: Sequence[str] | None = None,
        *,
        tokenizer: Tokenizer | None = None,
        **params: Unpack[BM25Params],
    ) -> Self:
        """Tokenize ``texts`` and index them; ``ids`` default to ``str(row)``; ``params`` as :meth:`from_tokens`.

        The cyclic garbage collector is paused meanwhile: a corpus makes one token list per text and
        nothing cyclic, and its collection passes (over everything the process holds, a catalog
        included) cost about a fifth of the film catalog's build.
        """
        tokenizer = tokenizer or DEFAULT_TOKENIZER
        enabled = gc.isenabled()
        gc.disable()
        try:
            return cls.from_tokens(
                tokenizer.tokenize_many(list(texts)), ids, tokenizer=tokenizer, **params
            )
        finally:
            if enabled:
                gc.enable()

    @classmethod
    def from_tokens(
        cls,
        corpus: list[list[str]],
        ids: Sequence[str] | None = None,
        *,
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
        idf: IdfKind = "okapi",
        tokenizer: Tokenizer | None = None,
    ) -> Self:
        """Index an already-tokenized corpus (``tokenizer`` is then used for queries only).

        Args:
            corpus: one token list per document.
            ids: one id per document (default ``str(row)``).
            k1: term-frequency saturation.
            b: document-length normalisation.
            epsilon: floor for negative ``okapi`` IDFs, as a fraction of the mean IDF.
            idf: ``"okapi"`` (``rank_bm25``'s) or ``"lucene"`` (always positive).
            tokenizer: how queries are tokenized (default :data:`DEFAULT_TOKENIZER`).
        """
        params: dict[str, Any] = {"k1": k1, "b": b, "epsilon": epsilon, "idf": idf}
        return cls._index(
            corpus, document_ids(ids, len(corpus)), params, tokenizer or DEFAULT_TOKENIZER
        )

    @classmethod
    @abstractmethod
    def _index(
        cls, corpus: list[list[str]], ids: list[str], params: dict[str, Any], tokenizer: Tokenizer
    ) -> Self:
        """Build the index of ``corpus``: ``ids`` checked (one per document), ``params`` as :meth:`from_tokens` took them."""

    @abstractmethod
    def search_tokens(self, tokens: list[str], k: int) -> list[Hit]:
        """Top ``k`` for an already-tokenized query."""

    def search(self, query: str, k: int) -> list[Hit]:
        """Top ``k`` documents containing a query term, best first (ties: lower row first)."""
        return self.search_tokens(self.tokenizer(query), k)
