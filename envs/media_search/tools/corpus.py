"""The ``media`` corpus the retrieval server indexes: one document per film of the catalog.

Why a function of its own: the family record names it, so ``agentenv
serve-retrieval --corpus media`` and the env's in-process index read the same
documents with the same checksum.
"""

from __future__ import annotations


def media_documents() -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """``(ids, texts, checksum)`` of the film catalog's documents."""
    from agentenv.corpora.media.catalog import load_catalog

    catalog = load_catalog()
    ids, texts = catalog.documents()
    return tuple(ids), tuple(texts), str(catalog.checksum)


def media_titles() -> list[str]:
    """Each film's title, in the order of :func:`media_documents` (what ``hybrid-minilm``'s title part indexes)."""
    from agentenv.corpora.media.catalog import load_catalog

    catalog = load_catalog()
    ids, _ = catalog.documents()
    return [catalog.get(i).title for i in ids]  # type: ignore[union-attr]


def bm25_search_query(query: str) -> str:
    """What ``hybrid-minilm``'s BM25 part searches for: the question reader's search query.

    Why: question words and filler ("who wrote", "the one where") match every
    film document that has them; the package's question reader
    (:func:`~agentenv.envs.media_search.questions.reading.read_question`) drops
    them and keeps names, titles and years, which lifted BM25's recall@10 on
    the validation questions from 0.75 to 0.80. MiniLM gets the query as sent
    (:func:`minilm_search_query`): it reads sentences. The reader returns a
    search query unchanged (idempotent on every validation and casual
    question), so an agent that already sends one (the bm25 agent) searches
    for the same words.

    Example:
        >>> bm25_search_query("who wrote juno?")
        'juno'
    """
    from agentenv.envs.media_search.questions.reading import read_question

    return read_question(query).query


def minilm_search_query(query: str) -> str | None:
    """What ``hybrid-minilm``'s MiniLM part searches for: the query as sent, or nothing when it names a person.

    Why: MiniLM finds films named loosely, but a film described by the people
    in it (two-hop and constraint questions, or the bm25 agent's query
    "1991 jodie foster anthony hopkins") is BM25's to find; MiniLM's list for
    such a query only pushes BM25's hits out of the fused top k (the bm25
    agent's accuracy on validation two-hop questions fell 0.86 -> 0.69 with
    it). A query names a person when two or three of its consecutive words
    are a credited name in the catalog.

    Example:
        >>> minilm_search_query("who wrote juno?")
        'who wrote juno?'
        >>> minilm_search_query("the 1991 movie with jodie foster") is None
        True
    """
    from agentenv.corpora.media.catalog import load_catalog, normalize_key

    people = load_catalog().people
    words = normalize_key(query).split()
    for n in (2, 3):
        for i in range(len(words) - n + 1):
            if " ".join(words[i : i + n]) in people:
                return None
    return query


def media_retriever_params(spec: str) -> dict[str, object]:
    """The family's own arguments for a retriever name (``build_retriever``'s ``params``); none but for ``hybrid-minilm``."""
    if spec == "hybrid-minilm":
        return {"rewrites": (bm25_search_query, minilm_search_query)}
    return {}


media_documents.retriever_params = media_retriever_params  # type: ignore[attr-defined]  # read by serve-retrieval
