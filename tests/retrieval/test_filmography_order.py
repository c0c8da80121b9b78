"""``hybrid-minilm`` on *longest peter jackson movie*: the named people's films in the order the question asks."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentenv.retrieval import build_retriever


@pytest.fixture(scope="module")
def catalog():  # type: ignore[no-untyped-def]
    from agentenv.corpora.media.catalog import load_catalog

    return load_catalog()


@pytest.fixture(scope="module")
def credits(catalog):  # type: ignore[no-untyped-def]
    from agentenv.envs.media_search.tools.corpus import CreditedFilms

    ids, texts = catalog.documents()
    return CreditedFilms(build_retriever("bm25", texts, ids, corpus_checksum=catalog.checksum))


def _title(catalog, hit) -> str:  # type: ignore[no-untyped-def]
    return catalog.get(hit.doc_id).title


def test_the_longest_film_of_a_director_heads_the_credited_list(catalog, credits) -> None:  # type: ignore[no-untyped-def]
    """BM25's order put *The Return of the King* 12th after fusion; the catalog's runtimes put it first."""
    hits = credits.search("longest peter jackson movie", 5)
    assert _title(catalog, hits[0]) == "The Lord of the Rings: The Return of the King"
    runtimes = [catalog.get(h.doc_id).runtime for h in hits]
    assert runtimes == sorted(runtimes, reverse=True)


def test_a_director_is_read_as_one_though_they_acted_in_more_films(catalog, credits) -> None:  # type: ignore[no-untyped-def]
    """Sofia Coppola acted in 11 films as a child and directed 5: her shortest film is one she directed."""
    person = catalog.people["sofia coppola"]
    (first,) = credits.search("shortest sofia coppola film", 1)
    directed = [catalog.titles[n] for n in person.directed]
    assert first.doc_id == min(directed, key=lambda t: t.runtime).id
    hanks = catalog.people["tom hanks"]  # directed two: an actor
    (longest,) = credits.search("longest tom hanks movie", 1)
    acted = [catalog.titles[n] for n in hanks.acted]
    assert catalog.get(longest.doc_id).runtime == max(t.runtime or 0 for t in acted)


@pytest.mark.parametrize(
    "question",
    [
        "longest peter jackson ring movie",  # a describing word: BM25's
        "longest peter jackson movie of the 90s",  # a decade narrows the films
        "peter jackson horror movie, the longest",  # a genre narrows them too
        "which came out first, heat or ronin",  # a comparison of two named films
        "peter jackson's best movie",  # *best* alone: phrasing, BM25's
        "the longest movie",  # no one named
    ],
)
def test_a_question_that_says_more_than_the_sort_keeps_bm25(question: str) -> None:
    from agentenv.envs.media_search.tools.corpus import bm25_fused_query, sorted_filmography

    assert sorted_filmography(question) is None
    assert bm25_fused_query(question) is not None


def test_a_surname_said_alone_is_sorted_too(catalog) -> None:  # type: ignore[no-untyped-def]
    from agentenv.envs.media_search.tools.corpus import bm25_fused_query, sorted_filmography

    rows = sorted_filmography("paul verhoeven's oldest film")
    years = [catalog.titles[n].year for n in rows]  # type: ignore[union-attr]
    main = catalog.people["paul verhoeven"].directed
    assert rows[0] in main and years[0] == min(catalog.titles[n].year for n in main)  # type: ignore[index]
    assert bm25_fused_query("paul verhoeven's oldest film") is None  # the list answers alone


_WORDS = {"runtime": ("longest", "shortest"), "year": ("newest", "oldest")}
"""Each sort's word for descending, then ascending."""


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    index=st.integers(min_value=0, max_value=10**6),
    field=st.sampled_from(sorted(_WORDS)),
    descending=st.booleans(),
    shape=st.sampled_from(["{w} {name} movie", "{name}'s {w} film", "what is the {w} {name} film"]),
)
def test_any_sort_question_about_one_person_heads_with_their_extreme_film(
    catalog, index: int, field: str, descending: bool, shape: str
) -> None:  # type: ignore[no-untyped-def]
    """Over people with five films or more: the first row is the extreme of their main credits, and every
    film credits them (a search, not a list of cases)."""
    from agentenv.envs.media_search.tools.corpus import named_people, sorted_filmography
    from agentenv.envs.media_search.tools.filmography_order import main_credits

    people = _people_with_films(catalog)
    person = people[index % len(people)]
    word = _WORDS[field][0 if descending else 1]
    question = shape.format(w=word, name=person.name.lower())
    named = named_people(question)
    rows = sorted_filmography(question)
    if rows is None:  # the name itself reads as more than a name (a word of a title, a year)
        return
    credited = {*person.directed, *person.wrote, *person.acted}
    if len(named) != 1:
        credited = set.intersection(*({*p.directed, *p.wrote, *p.acted} for p in named))
    assert set(rows) == credited
    if len(named) == 1:
        main = main_credits(named[0])
        values = [
            getattr(catalog.titles[n], field) for n in main if getattr(catalog.titles[n], field)
        ]
        top = getattr(catalog.titles[rows[0]], field)
        assert top == (max(values) if descending else min(values))


def _people_with_films(catalog):  # type: ignore[no-untyped-def]
    cached = getattr(_people_with_films, "cached", None)
    if cached is None:
        cached = sorted(
            (p for p in catalog.people.values() if len({*p.directed, *p.wrote, *p.acted}) >= 5),
            key=lambda p: p.name,
        )
        _people_with_films.cached = cached  # type: ignore[attr-defined]
    return cached


def test_a_rating_sort_counts_where_a_word_says_so(catalog) -> None:  # type: ignore[no-untyped-def]
    """*worst rated spielberg movie*: his directed film with the lowest critics' rating comes first."""
    from agentenv.envs.media_search.tools.corpus import sorted_filmography

    rows = sorted_filmography("worst rated spielberg movie")
    directed = [catalog.titles[n] for n in catalog.people["steven spielberg"].directed]
    lowest = min(t.rating for t in directed if t.rating is not None)
    assert catalog.titles[rows[0]].rating == lowest  # type: ignore[index]
    assert sorted_filmography("spielberg's best movie") is None  # *best* alone is phrasing


def test_a_possessive_typed_without_its_apostrophe_reads_as_the_surname() -> None:
    from agentenv.envs.media_search.tools.surnames import surname_index

    index = surname_index()
    assert index.surnames_said("spielbergs first movie", ["spielbergs", "first"]) == {
        "spielbergs": "spielberg"
    }
    assert index.surnames_said("lost in the woods", ["woods"]) == {}  # after an article
    assert (
        index.surnames_said("what year did simpsons movie come out", ["simpsons"]) == {}
    )  # a title word
