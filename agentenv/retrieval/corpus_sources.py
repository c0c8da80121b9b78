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

from agentenv.families import corpus_names, load_corpus


def load_corpus_texts(name: str) -> tuple[list[str], list[str], str]:
    """Return ``(ids, texts, checksum)`` of the documents of corpus ``name``.

    Raises:
        agentenv.errors.UserInputError: for a name no registered family offers (a ``ValueError``).
    """
    return load_corpus(name)


__all__ = ["corpus_names", "load_corpus_texts"]
