"""The ``media`` corpus the retrieval server indexes: one document per film of the catalog.

Why a function of its own: the family record names it, so ``agentenv
serve-retrieval --corpus media`` and the env's in-process index read the same
documents with the same checksum.
"""

from __future__ import annotations


def media_documents() -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """``(ids, texts, checksum)`` of the film catalog's documents."""
    from agentenv.corpora.media import load_catalog

    catalog = load_catalog()
    ids, texts = catalog.documents()
    return tuple(ids), tuple(texts), str(catalog.checksum)
