"""One searchable text document per disease, for ``search_diseases`` and the retrieval server.

Why this text: a clinician searches a disease database with the words of the
case ("tall, long slender fingers, dislocated lens"), so a disease must be
findable both by its names and by the labels of its annotated phenotypes. A
document is the primary name, the synonyms, then every annotated phenotype
label, in the KB's (term id) order. Nothing about patients, splits or tasks
goes in: the documents are a function of the HPO release and the universe.

The same function feeds the env's BM25 index and the retrieval server
(``agentenv serve`` over the ``rare-disease`` corpus), so a served index and
an in-process one rank alike.

Example:
    >>> disease_text("Marfan syndrome", ["MFS"], ["Arachnodactyly", "Ectopia lentis"])
    'Marfan syndrome. MFS. Arachnodactyly; Ectopia lentis'
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.retrieval.base import Retriever

DOCUMENTS_VERSION = 1
"""Bump when the document text changes: it is part of :func:`documents_checksum`, the index cache key."""


def disease_text(name: str, synonyms: Sequence[str], labels: Sequence[str]) -> str:
    """The document of one disease: names first, then phenotype labels."""
    head = ". ".join([name, *synonyms])
    return f"{head}. {'; '.join(labels)}" if labels else head


@lru_cache(maxsize=4)
def disease_documents(kb: HpoKnowledgeBase) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(ids, texts)``: one document per universe disease, in ``kb.disease_ids`` order.

    Memoised per KB object (a KB is shared read-only by every env of a process).
    """
    names = kb.term_names
    ptr = kb.pheno_indptr.tolist()
    terms = kb.pheno_terms.tolist()
    texts = []
    for d, disease_id in enumerate(kb.disease_ids):
        info = kb.disease(disease_id)
        labels = [names[t] for t in terms[ptr[d] : ptr[d + 1]]]
        texts.append(disease_text(info.name, info.synonyms, labels))
    return tuple(kb.disease_ids), tuple(texts)


def documents_checksum(kb: HpoKnowledgeBase) -> str:
    """Cache key of the documents: HPO source files, universe and :data:`DOCUMENTS_VERSION`.

    It is computed without building the documents, so a warm index loads
    without them.
    """
    blob = f"{kb.checksum}|{kb.universe}|disease-documents-v{DOCUMENTS_VERSION}"
    return hashlib.sha256(blob.encode()).hexdigest()


class DiseaseTexts(Sequence[str]):
    """The documents' texts, built on first access; their count is known without them.

    Why: building the documents takes ~0.3 s, and a warm index cache needs
    only their count and ids (its key) to load the index. Handing the index
    cache this sequence lets ``gym.make`` load the disease index from disk in
    tens of milliseconds, and build the texts only on a cache miss.
    """

    def __init__(self, kb: HpoKnowledgeBase) -> None:
        self._kb = kb

    def __len__(self) -> int:
        return len(self._kb.disease_ids)

    def __getitem__(self, index):  # type: ignore[no-untyped-def]  # Sequence's int/slice overloads
        return disease_documents(self._kb)[1][index]


@lru_cache(maxsize=8)
def disease_retriever(kb: HpoKnowledgeBase, spec: str = "bm25") -> Retriever:
    """The disease index of ``search_diseases``: loaded (or built) now, cached on disk, shared in-process.

    Called when a rare-disease env with tools is made, so the first
    ``search_diseases`` step searches and builds nothing (a first call that
    built it took 0.4-1.0 s inside the step, under the tool's deadline).
    ``spec`` is a :func:`agentenv.retrieval.build_retriever` name: ``"bm25"``
    (default), ``"dense-minilm"``, ``"hybrid-minilm"``, ... (every name of
    :data:`agentenv.retrieval.RETRIEVER_NAMES`), or the URL of a retrieval
    server serving the ``rare-disease`` corpus.
    """
    from agentenv.retrieval import build_retriever

    if spec.startswith(("http://", "https://")):
        return build_retriever(spec)
    texts = DiseaseTexts(kb)
    return build_retriever(
        spec, texts, list(kb.disease_ids), corpus_checksum=documents_checksum(kb)
    )  # type: ignore[arg-type]


def disease_corpus() -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """``(ids, texts, checksum)`` of the ``rare-disease`` corpus (OMIM universe), for ``serve-retrieval``."""
    from agentenv.corpora.hpo.knowledge_base import load_hpo_kb

    kb = load_hpo_kb()
    ids, texts = disease_documents(kb)
    return ids, texts, documents_checksum(kb)
