"""The one retrieval interface every back-end implements.

A search tool costs one ``Retriever.search`` per call, so the interface is
tiny and the result record is a frozen tuple: cheap to build, safe to share.

Example:
    >>> Hit(doc_id="t42", score=3.5, rank=0)
    Hit(doc_id='t42', score=3.5, rank=0)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol, runtime_checkable


class Hit(NamedTuple):
    """One search result: the document id, its score, and its 0-based rank."""

    doc_id: str
    score: float
    rank: int


def document_ids(ids: Sequence[str] | None, n: int) -> list[str]:
    """The ids of an ``n``-document corpus, as ``from_texts(texts, ids=None)`` takes them.

    ``None`` gives ``str(row)``; other ids are converted with ``str``.

    Raises:
        ValueError: an empty corpus, or not one id per document.

    Example:
        >>> document_ids(None, 3)
        ['0', '1', '2']
    """
    if n == 0:
        raise ValueError("cannot index an empty corpus")
    ids = [str(i) for i in range(n)] if ids is None else [str(i) for i in ids]
    if len(ids) != n:
        raise ValueError(f"{len(ids)} ids for {n} documents")
    return ids


@runtime_checkable
class Retriever(Protocol):
    """Anything that ranks documents for a text query.

    Back-ends are built with ``Backend.from_texts(texts, ids=None, **params)``;
    the HTTP client implements the same protocol so that env workers can
    share one index served elsewhere.
    """

    def search(self, query: str, k: int) -> list[Hit]:
        """Return the top ``k`` hits, best first, ties broken by row order (the lower corpus row first)."""
        ...

    def search_batch(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        """Return ``search(q, k)`` for every query, possibly faster."""
        ...
