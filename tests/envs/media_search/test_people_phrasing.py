"""Questions as people write them: the reader and the bm25 baseline handle each kind by a rule.

The kinds (issue 44): a possessive on a name ("blomkamp's"), a stray word beside a name
("damien chazelle listed"), a film called by a stylised or short name (digits for letters or
numerals, a subtitle alone), a long cast list that buries the film in search, and two
superlatives over one director. The questions below are none of the casual split's nor of
``tests/data/people_questions.jsonl``: each kind is read by its rule, on films not tuned on.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.envs.media_search.agents.bm25_strategy import MediaSearchBM25, name_candidates
from agentenv.envs.media_search.agents.film_match import match_score, subtitle_named, title_named
from agentenv.envs.media_search.questions.reading import (
    numbered_forms,
    possessors,
    read_question,
    without_possessives,
)
from agentenv.envs.media_search.tasks.casual import casual_questions


@pytest.mark.parametrize(
    ("question", "asks", "rest", "sort"),
    [
        ("kubrick's longest movie", "superlative", "kubrick", ("runtime", "desc")),
        ("the coens' newest and best rated", "superlative", "coens", ("year", "desc")),
        ("shortest ridley scott film", "superlative", "ridley scott", ("runtime", "asc")),
        ("tim burton listed as director on which 1990 film", "title", None, None),
        ("what film is ang lee credited director of", "title", None, None),
        ("who is the director of jaws", "director", None, None),
        ("gladiator release year", "year", None, None),
        ("the godfather came out when?", "year", None, None),
    ],
)
def test_what_is_asked_and_whose(question, asks, rest, sort) -> None:
    reading = read_question(question)
    assert reading.asks == asks
    if rest is not None:
        assert reading.rest == rest and reading.sort == sort


def test_a_possessive_is_taken_off_a_name_but_kept_as_the_owner() -> None:
    assert without_possessives("Scorsese's and the Coens’ films") == "Scorsese and the Coens films"
    assert possessors("spielberg's jaws and the wachowskis' matrix") == ("spielberg", "wachowski")
    assert "spielberg" in read_question("spielberg's jaws, how long").query.split()
    reading = read_question("scott's gladiator, how long is it")
    gladiator_2000 = {"title": "Gladiator", "year": 2000, "directors": ["Ridley Scott"]}
    gladiator_1992 = {"title": "Gladiator", "year": 1992, "directors": ["Rowdy Herrington"]}
    assert match_score(reading, gladiator_2000, 1) > match_score(reading, gladiator_1992, 0)


def test_numbers_and_subtitles_name_a_film() -> None:
    assert numbered_forms("rocky 5") == ["v"] and numbered_forms("thr3e") == ["three"]
    assert numbered_forms("1999 film") == [] and numbered_forms("b4") == []
    assert not title_named(
        "back to the future 3 year", "Back to the Future Part III"
    )  # "part" left out
    assert title_named("rocky 5 year", "Rocky V") and title_named(
        "back to the future part 3", "Back to the Future Part III"
    )
    assert subtitle_named(
        "the cradle of life director", "Lara Croft: Tomb Raider – The Cradle of Life"
    )
    assert not subtitle_named("director of the movie", "Scary Movie: The Movie")


def test_a_full_name_is_not_also_counted_for_a_namesake() -> None:
    reading = read_question("damien chazelle listed as director on what drumming movie")
    film = {"title": "A", "directors": ["Damien Chazelle"], "cast": []}
    with_namesake = {"title": "B", "directors": ["Damien Chazelle"], "cast": ["Bernard Chazelle"]}
    assert match_score(reading, film) == match_score(reading, with_namesake)


def test_names_are_looked_up_without_the_words_beside_them() -> None:
    assert name_candidates("tim burton only") == ["tim burton", "burton only"]
    assert name_candidates("fincher") == []


def test_options_lose_a_leading_comparative() -> None:
    assert read_question("which is longer jaws or heat").options == ("jaws", "heat")


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("spielberg's jaws, how long", "124"),  # a possessive on a name
        ("tim burton listed as director on which 1990 film", "Edward Scissorhands"),  # a stray word
        (
            "how many films did david lynch make, director credits only",
            None,
        ),  # a stray word, a count
        ("rocky 3 who directed", "Sylvester Stallone"),  # digits for a numeral
        ("the cradle of life director", "Jan de Bont"),  # a subtitle alone
        (
            "the movie with keanu reeves laurence fishburne carrie-anne moss hugo weaving",
            "The Matrix",
        ),  # a long cast list
        (
            "ridley scott's oldest and shortest film",
            "The Duellists",
        ),  # two superlatives, one director
    ],
)
def test_the_bm25_baseline_answers_each_kind(question, answer) -> None:
    from agentenv.corpora.media.catalog import load_catalog

    if answer is None:  # the count is read from the catalog, not written here
        answer = str(sum("David Lynch" in f.directors for f in load_catalog()))
    env = gym.make("MediaSearch-v0", tasks=[{"question": question, "answer": answer}])
    obs, info = env.reset(seed=0)
    agent = MediaSearchBM25()
    agent.reset(obs, info)
    reward, done = 0.0, False
    while not done:
        obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
        done = terminated or truncated
    assert reward == 1.0, (question, info.get("answer_feedback"))


def test_the_people_written_set_loads_typed_from_the_catalog() -> None:
    """``tests/data/people_questions.jsonl``: questions written as people write, kept beside the casual
    split to measure the bm25 baseline on (docs/envs/media_search.md); every gold types from the catalog."""
    from pathlib import Path

    from agentenv.envs.media_search.tasks.user_tasks import load_user_tasks

    path = Path(__file__).parents[2] / "data" / "people_questions.jsonl"
    questions = load_user_tasks(path)
    assert len(questions) >= 40
    assert {q.answer_type for q in questions} == {"title", "person", "number", "year"}
    assert not {q.question for q in casual_questions()} & {q.question for q in questions}
