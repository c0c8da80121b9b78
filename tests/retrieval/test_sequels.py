"""``hybrid-minilm`` on *third iron man movie*: a film asked for by its place in a series."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ORDINAL_WORDS = ("", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


@pytest.fixture(scope="module")
def titles():  # type: ignore[no-untyped-def]
    from agentenv.corpora.media.catalog import load_catalog

    return load_catalog().titles


def _numbered_titles():  # type: ignore[no-untyped-def]
    """``(series words, number, row)`` of every title that is a series' words and a sequel number alone."""
    from agentenv.corpora.media.catalog import load_catalog, normalize_key
    from agentenv.envs.media_search.tools.sequels import NUMBERS, ORDINALS

    out = []
    for row, title in enumerate(load_catalog().titles):
        words = normalize_key(title.title).split()
        if words[:1] == ["the"]:
            words = words[1:]
        if len(words) < 2 or words[-1] not in NUMBERS or NUMBERS[words[-1]] < 2:
            continue
        series = words[:-1]
        if series[-1] in ("part", "chapter", "episode"):
            series = series[:-1]
        if series and not any(w in ORDINALS or w in NUMBERS for w in series):  # *rambo first blood*
            out.append((" ".join(series), NUMBERS[words[-1]], row))
    return out


NUMBERED = _numbered_titles()


def test_there_are_numbered_sequels_to_search() -> None:
    assert len(NUMBERED) >= 50


@settings(max_examples=80, deadline=None, derandomize=True)
@given(pick=st.integers(min_value=0, max_value=10**6), shape=st.sampled_from(["number", "ordinal"]))
def test_a_numbered_sequel_asked_by_its_number_or_ordinal_is_found(
    titles, pick: int, shape: str
) -> None:  # type: ignore[no-untyped-def]
    """*toy story 3* and *the third toy story movie* give *Toy Story 3*, for any such title of the catalog,
    unless the series words also start too many titles to be one series (then nothing)."""
    from agentenv.envs.media_search.tools.sequels import series_film

    series, number, row = NUMBERED[pick % len(NUMBERED)]
    if shape == "number":
        question = f"{series} {number}, who directed it"
    else:
        if number >= len(ORDINAL_WORDS):
            return
        question = f"the {ORDINAL_WORDS[number]} {series} movie, how long is it"
    found = series_film(question)
    if found is not None:
        assert titles[found].title == titles[row].title or _same_numbered_title(titles, found, row)


def _same_numbered_title(titles, found: int, row: int) -> bool:  # type: ignore[no-untyped-def]
    """Another title of the series with the same number (*The Hills Have Eyes Part II* for *... 2*,
    or a remake of the same title) is the film the words ask for too."""
    from agentenv.corpora.media.catalog import normalize_key
    from agentenv.envs.media_search.tools.sequels import NUMBERS

    def words(n: int) -> list[str]:
        w = normalize_key(titles[n].title).split()
        return w[1:] if w[:1] == ["the"] else w

    want, got = words(row), words(found)
    series, number = want[:-1], NUMBERS[want[-1]]
    rest = got[len(series) :]
    if rest[:1] in (["part"], ["chapter"], ["episode"]):
        rest = rest[1:]
    return got[: len(series)] == series and rest[:1] != [] and NUMBERS.get(rest[0]) == number


def test_the_place_of_an_unnumbered_series_is_read_by_year(titles) -> None:  # type: ignore[no-untyped-def]
    from agentenv.envs.media_search.tools.sequels import series_film

    assert titles[series_film("harry potter 4, the triwizard one")].title == (  # type: ignore[index]
        "Harry Potter and the Goblet of Fire"
    )
    assert titles[series_film("the second bourne movie... no sorry the third one")].title == (  # type: ignore[index]
        "The Bourne Ultimatum"
    )


@pytest.mark.parametrize(
    "question",
    [
        "who directed heat",  # no place
        "the one with hit girl, the first not the sequel",  # a place, no series
        "top 5 movies of 1994",  # a count, not a place
        "what's the runtime of star trek: first contact",  # *contact* alone is no series
        "the 6th day, who directed it",  # *day* starts too many titles
        "ocean's 11 cast",  # the number is part of the title, past any place
    ],
)
def test_no_series_no_film(question: str) -> None:
    from agentenv.envs.media_search.tools.sequels import series_film

    assert series_film(question) is None


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(max_size=120))
def test_any_text_gives_a_row_or_nothing(text: str) -> None:
    from agentenv.corpora.media.catalog import load_catalog
    from agentenv.envs.media_search.tools.sequels import series_film

    found = series_film(text)
    assert found is None or 0 <= found < len(load_catalog().titles)


def test_hybrid_minilm_s_credited_list_holds_the_series_film_when_no_one_is_named(titles) -> None:  # type: ignore[no-untyped-def]
    from agentenv.corpora.media.catalog import load_catalog
    from agentenv.envs.media_search.tools.corpus import CreditedFilms
    from agentenv.retrieval import build_retriever

    catalog = load_catalog()
    ids, texts = catalog.documents()
    credits = CreditedFilms(build_retriever("bm25", texts, ids, corpus_checksum=catalog.checksum))
    (hit,) = credits.search("third iron man movie, who directed it", 10)
    assert catalog.get(hit.doc_id).title == "Iron Man 3"
    assert credits.search("who wrote juno?", 10) == []
