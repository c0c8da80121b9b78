"""The shared question reader: the field a question asks for, and a search query free of question words."""

from __future__ import annotations

import pytest

from agentenv.envs.media_search.agents.film_match import match_score, title_named
from agentenv.envs.media_search.questions.reading import (
    fold,
    genre_of,
    read_question,
    years_between,
)


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("who directed jaws", "director"),
        ("when was boyhood released (year)?", "year"),
        ("back to the future came out in what year?", "year"),
        (
            "Which Tarantino film came out in 1994?",
            "title",
        ),  # a year as a constraint, not the question
        ("forrest gump screenplay was written by who?", "writer"),
        ("die hard, how many minutes does it run", "runtime"),
        ("how long is the 2000 historical epic with russell crowe", "runtime"),
        ("was al pacino or jack nicholson in the godfather?", "cast"),
        ("who's in fight club, brad pitt or tom cruise?", "cast"),
        ("is inception longer than the dark knight?? which one is longer", "compare"),
        ("between jaws and jurassic park which has the better reviews", "compare"),
        ("Which was released first: Star Trek: Insurrection or The Divide?", "compare"),
        ("Who directed Alien vs. Predator?", "director"),
        ("best rated horror movie from 1980?", "superlative"),
        ("Which 2014 musical feature film has the longest runtime?", "superlative"),
        ("how many films did spielberg direct in the 90s", "count"),
        ("the spielberg shark horror movie from the 70s, what was it called", "title"),
    ],
)
def test_the_field_comes_from_the_meaning_not_a_template(question: str, asks: str) -> None:
    assert read_question(question).asks == asks


def test_the_query_drops_question_words_and_keeps_names_years_and_titles() -> None:
    assert read_question("who wrote Boyhood?").query == "Boyhood"
    query = read_question("that 1999 sci-fi film where Keanu Reeves learns kung fu").query.split()
    assert {"Keanu", "Reeves", "1999", "kung", "fu"} <= set(query) and not {
        "film",
        "where",
        "that",
    } & set(query)
    # title words that are also common words stay: "Mean Girls", "Top Gun", "Good Will Hunting"
    assert read_question("who wrote the script of mean girls").query == "mean girls"
    assert read_question("in top gun, was it tom cruise or tom hanks").query == "top gun"


def test_options_years_genres_and_the_person_left() -> None:
    r = read_question("which runs longer: amadeus or schindler's list")
    assert r.options == ("amadeus", "schindler's list") and r.sort == ("runtime", "desc")
    assert read_question("Of Slam and Yellow Submarine, which came out earlier?").options == (
        "Slam",
        "Yellow Submarine",
    )
    r = read_question("number of films scorsese directed between 2000 and 2010?")
    assert (r.rest, r.years_between, r.role) == ("scorsese", (2000, 2010), "directed")
    r = read_question("how many westerns did john wayne star in")
    assert (r.rest, r.genre, r.role) == ("john wayne", "Western", "acted")
    assert (
        years_between("made in the '60s") == (1960, 1969) and years_between("no years here") is None
    )
    assert genre_of("an animated film") == "Animation" and genre_of("a film") is None
    assert fold("Amélie’s SCI-FI") == "amelies sci fi"


def test_a_hostile_or_huge_question_is_read_without_error() -> None:
    for text in ("", "?", "or or or", "(" * 5000, "who " * 3000, "é\u0000\u202e"):
        r = read_question(text)
        assert isinstance(r.query, str) and len(r.query) <= 500


def test_the_film_named_outscores_one_that_only_shares_words() -> None:
    r = read_question("what year did the first godfather movie come out")
    first = {"title": "The Godfather", "year": 1972}
    sequel = {"title": "The Godfather Part II", "year": 1974}
    assert title_named(r.question, first["title"]) and not title_named(r.question, sequel["title"])
    assert match_score(r, first) > match_score(r, sequel)
    r = read_question("who directed heat, the one with pacino and de niro?")
    heat = {"title": "Heat", "year": 1995, "cast": ["Al Pacino", "Robert De Niro"]}
    other = {"title": "Heat", "year": 1987, "cast": ["Burt Reynolds"]}
    assert match_score(r, heat) > match_score(r, other)


def test_the_memoised_readers_answer_as_computed_and_keep_no_long_text() -> None:
    from agentenv.envs.media_search.questions import reading

    long = "Rocky 4, Amélie's " * (reading.MEMO_CHARS // 10)
    for read in (reading.fold, reading.numbered_variant, reading.possessors):
        for text in ("Amélie's SCI-FI", "rocky 4 who directed Se7en", "the Coens' best", long):
            assert read(text) == read(text) == read.__wrapped__(text)
        before = read.cache_info().currsize
        read(long + "x")
        assert read.cache_info().currsize == before
