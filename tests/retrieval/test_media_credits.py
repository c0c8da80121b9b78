"""MediaSearch's own parts of ``hybrid-minilm``: people named by surname alone, and the words questions are phrased with."""

from __future__ import annotations

import pytest

from agentenv.retrieval import build_retriever


@pytest.fixture(scope="module")
def credits():  # type: ignore[no-untyped-def]
    from agentenv.corpora.media.catalog import load_catalog
    from agentenv.envs.media_search.tools.corpus import CreditedFilms

    catalog = load_catalog()
    ids, texts = catalog.documents()
    return CreditedFilms(build_retriever("bm25", texts, ids, corpus_checksum=catalog.checksum))


def test_a_director_named_by_surname_alone_narrows_the_list_to_their_films(credits) -> None:  # type: ignore[no-untyped-def]
    """*emmerich 2004 disaster movie ...*: BM25 alone ranked *The Day After Tomorrow* 18th."""
    from agentenv.corpora.media.catalog import load_catalog

    catalog = load_catalog()
    (film,) = catalog.find_title("The Day After Tomorrow")
    hits = credits.search("emmerich 2004 disaster movie where new york freezes over", 10)
    assert hits[0].doc_id == film.id  # type: ignore[union-attr]
    for h in hits:
        people = {
            *catalog.get(h.doc_id).directors,
            *catalog.get(h.doc_id).writers,
            *catalog.get(h.doc_id).cast,
        }  # type: ignore[union-attr]
        assert any(p.lower().endswith("emmerich") for p in people)


def test_a_surname_that_names_a_top_title_is_read_as_the_title(credits) -> None:  # type: ignore[no-untyped-def]
    """*Sullivan's Travels* is about no one named Sullivan: the list stays empty and BM25 finds the film."""
    from agentenv.envs.media_search.tools.surnames import surname_index

    assert surname_index().films("sullivan") is not None  # a surname in the catalog ...
    assert credits.search("what year did sullivan's travels come out?", 10) == []  # ... not here
    assert credits.search("who wrote juno?", 10) == []


def test_words_used_otherwise_than_as_surnames_are_not_surnames() -> None:
    from agentenv.envs.media_search.tools.surnames import MIN_FILMS, surname_index

    index = surname_index()
    for word in ("bigelow", "emmerich", "soderbergh"):
        assert len(index.films(word) or ()) >= MIN_FILMS
    for word in ("wild", "black", "cash", "lee"):  # title words and colours; too short
        assert index.films(word) is None


def test_the_phrasing_words_are_those_of_the_generated_train_questions() -> None:
    """The shipped list is what ``phrasing_words`` finds in the train split (re-derived, never hand-edited)."""
    from agentenv.envs.media_search.tasks.question_tasks import split_questions
    from agentenv.envs.media_search.tools.phrasing import PHRASING_WORDS, phrasing_words

    assert phrasing_words(q.question for q in split_questions("train")) == PHRASING_WORDS
