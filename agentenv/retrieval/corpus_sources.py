"""Name → documents, for the corpora the retrieval server can index.

The server command takes a corpus *name*, not a path, so a worker and the
server agree on what is indexed; the checksum travels with the documents
and is shown by ``/info`` so a client can check it queries the right index.
Corpus modules are imported lazily: each pulls in its own data package.

Example:
    >>> CORPORA
    ('media', 'rare-disease')
"""

from __future__ import annotations

from typing import Literal, get_args

CorpusName = Literal["media", "rare-disease"]
CORPORA: tuple[str, ...] = get_args(CorpusName)


def load_corpus_texts(name: CorpusName) -> tuple[list[str], list[str], str]:
    """Return ``(ids, texts, checksum)`` of the documents of corpus ``name``.

    ``media``: one document per film of the catalog. ``rare-disease``: one
    document per disease of the HPO knowledge base (OMIM universe).

    Raises:
        ValueError: for an unknown name.
    """
    if name == "media":
        from agentenv.corpora.media import load_catalog

        catalog = load_catalog()
        ids, texts = catalog.documents()
        return list(ids), list(texts), str(catalog.checksum)
    if name == "rare-disease":
        from agentenv.corpora.hpo import load_hpo_kb
        from agentenv.envs.rare_disease.documents import disease_documents, documents_checksum

        kb = load_hpo_kb()
        ids, texts = disease_documents(kb)
        return list(ids), list(texts), documents_checksum(kb)
    raise ValueError(f"unknown corpus {name!r}; expected one of {', '.join(CORPORA)}")
