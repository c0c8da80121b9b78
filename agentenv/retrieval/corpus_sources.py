"""Name → documents, for the corpora the retrieval server can index.

The server command takes a corpus *name*, not a path, so a worker and the
server agree on what is indexed; the checksum travels with the documents
and is shown by ``/info`` so a client can check it queries the right index.
The names come from the registered families (``Family.corpora``): a family
kept outside this package serves its corpus the same way.

Example:
    >>> corpus_names()
    ('media', 'rare-disease')
"""

from __future__ import annotations

from typing import Any

from agentenv.families import corpus_names, families, load_corpus, resolve


def load_corpus_texts(name: str) -> tuple[list[str], list[str], str]:
    """Return ``(ids, texts, checksum)`` of the documents of corpus ``name``.

    Raises:
        agentenv.errors.UserInputError: for a name no registered family offers (a ``ValueError``).
    """
    return load_corpus(name)


def corpus_retriever_params(name: str, spec: str) -> dict[str, Any]:
    """A corpus's own ``build_retriever`` arguments for back-end ``spec`` (e.g. a query rewrite), or none.

    Why: a family may give a retriever more than the documents (MediaSearch gives
    ``hybrid-minilm``'s BM25 part its question reader's query); the served index must
    search as the env's in-process one does. A corpus loader says so with a
    ``retriever_params(spec)`` attribute.
    """
    name = name.rpartition(":")[2]
    for family in families():
        if name in family.corpora:
            params = getattr(resolve(family.corpora[name]), "retriever_params", None)
            return dict(params(spec)) if params is not None else {}
    return {}


__all__ = ["corpus_names", "corpus_retriever_params", "load_corpus_texts"]
