"""Grading by the closed grammar: titles resolve to catalog films, people to people, numbers to integers."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from agentenv.envs.media_search.grading.grade import (
    grade_answer,
    number_words,
    read_answer,
    read_integer,
)
from agentenv.envs.media_search.questions.record import Question

TITLE = Question(
    "q1",
    "Which 2012 film ...?",
    "The Dark Knight Rises",
    ("tt1345836", "The Dark Knight Rises (2012)"),
    "title",
    "constraint",
)
PERSON = Question("q2", "Who directed ...?", "Pedro Almodóvar", (), "person", "lookup")
JUNIOR = Question("q3", "Who is in ...?", "Robert Downey Jr.", (), "person", "lookup")
COUNT = Question("q4", "How many ...?", "7", ("seven",), "number", "count")
YEAR = Question("q5", "In what year ...?", "1994", (), "year", "lookup")
AMP = Question(
    "q6", "Which ...?", "Romeo & Juliet: Sealed with a Kiss", ("tt0830199",), "title", "lookup"
)
PLUS = Question("q10", "Which ...?", "Romeo + Juliet", ("tt0117509",), "title", "lookup")
EVIL_DEAD = Question(
    "q7", "Which 1981 horror film ...?", "The Evil Dead", ("tt0083907",), "title", "lookup"
)
SHARED = Question(
    "q8",
    "Which 2004 film ...?",
    "Walking Tall",
    ("tt0351977", "Walking Tall (2004)"),
    "title",
    "lookup",
)
CUSTOM = Question("q9", "Which film ...?", "A Film Not In The Catalog", (), "title", "custom")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Dark Knight Rises", True),
        ("  the dark knight rises. ", True),
        ("Dark Knight Rises", True),
        ('"The Dark Knight Rises"', True),
        ("**The Dark Knight Rises**", True),
        ("1. The Dark Knight Rises", True),
        ("TT1345836", True),  # an id in any case names its film (as rare-disease ids do)
        ("tt1345836", True),
        ("The Dark Knight Rises (2012)", True),
        ("The Dark Knight Rises (2011)", False),
        ("The Dark Knight", False),
        ("The Dark Knight Rises or Inception", False),
        ("The Dark Knight Rises?", False),
        ("¬The Dark Knight Rises", False),
        ("~~The Dark Knight Rises~~", False),
        ("<!-- The Dark Knight Rises -->", False),
        ("The Dark Knight Rises\nnot", False),
        ("", False),
    ],
)
def test_title_answers(text, expected):
    assert grade_answer(text, TITLE) is expected


@pytest.mark.parametrize(
    ("question", "text", "expected"),
    [
        (PERSON, "Pedro Almodovar", True),
        (PERSON, "pedro almodóvar", True),
        (PERSON, "Almodóvar", False),
        (PERSON, "Pedro Almodóvar ❌", False),
        (JUNIOR, "Robert Downey, Jr.", False),  # a comma the catalog's name does not have
        (JUNIOR, "Robert Downey Jr", True),
        (JUNIOR, "Robert Downey", False),
        (AMP, "Romeo & Juliet: Sealed with a Kiss", True),
        (AMP, "Romeo and Juliet Sealed with a Kiss", True),
        (AMP, "tt0830199", True),
        (PLUS, "Romeo + Juliet", True),
        (PLUS, "Romeo & Juliet", False),  # no such film
        (PLUS, "Romeo and Juliet (1968)", False),
        (EVIL_DEAD, "The Evil Dead", True),
        (EVIL_DEAD, "Evil Dead", False),  # the 2013 film
        (SHARED, "Walking Tall", False),  # 1973 and 2004 share it
        (SHARED, "Walking Tall (2004)", True),
        (SHARED, "Walking Tall (1973)", False),
        (CUSTOM, "a film not in the catalog", True),
        (CUSTOM, "a film not in the catalog!", False),
    ],
)
def test_text_answers(question, text, expected):
    assert grade_answer(text, question) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7", True),
        ("seven", True),
        ("Seven.", True),
        ("**7**", True),
        ("- 7", True),
        ("7 films", False),
        ("7.0", True),
        ("7.5", False),
        ("0,007", False),
        ("8", False),
        ("7 or 8", False),
        ("-7", False),
        ("¬7", False),
        ("7？", False),
        ("many", False),
        ("", False),
    ],
)
def test_number_answers(text, expected):
    assert grade_answer(text, COUNT) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1994", True),
        ("**1994**", True),
        ("1994.", True),
        ("1,994", True),
        ("1994.0", True),
        ("1994.0.", True),
        ("0,001,994", False),
        ("001,994", False),
        ("1994.01", False),
        ("In 1994.", False),
        ("1995", False),
        ("the 1990s", False),
        ("1994 or 1995", False),
        ("'94", False),
        ("1993.99999999999999999", False),
        ("nineteen ninety-four", False),
    ],
)
def test_year_answers(text, expected):
    assert grade_answer(text, YEAR) is expected


def test_unreadable_answers_say_why():
    reading = read_answer("The Dark Knight Rises\nmaybe", TITLE)
    assert not reading.correct and "more than one line" in reading.feedback
    reading = read_answer("Walking Tall", SHARED)
    assert "add the year" in reading.feedback and "1973" in reading.feedback
    assert read_answer("Evil Dead", EVIL_DEAD).feedback.startswith(
        "read as the film 'Evil Dead' (2013"
    )


def test_number_words():
    assert [number_words(n) for n in (0, 13, 20, 21, 99)] == [
        "zero",
        "thirteen",
        "twenty",
        "twenty-one",
        "ninety-nine",
    ]
    assert [read_integer(number_words(n), words=True) for n in range(100)] == list(range(100))
    assert (
        read_integer("twenty-one", words=True) == 21
        and read_integer("seven", words=False) is None
        and read_integer("twenty-one", words=False) is None
    )


def test_a_remembered_reading_is_the_reading_of_that_text_and_that_gold(monkeypatch) -> None:
    """The grader's memory is keyed by the text and the gold: the same text against another gold is
    read again, and a full memory is emptied, not grown."""
    from agentenv.envs.media_search.grading import grade as grading
    from agentenv.envs.media_search.grading.answer_catalog import answer_catalog

    first = read_answer("1994", YEAR)
    assert read_answer("1994", YEAR) is first and first.correct
    other = Question("q11", "In what year ...?", "1995", (), "year", "lookup")
    assert not read_answer("1994", other).correct
    assert read_answer("Robert Downey Jr..", JUNIOR).correct
    assert not read_answer("Robert Downey Jr..", PERSON).correct
    monkeypatch.setattr(grading, "READINGS_KEPT", 2)
    cat = answer_catalog()
    for text in ("Pedro Almodovar", "**pedro almodóvar**", "PEDRO ALMODÓVAR", "- Almodóvar"):
        read_answer(text, PERSON)
        read_answer(
            text, SimpleNamespace(answer="Pedro Almodóvar", aliases=[], answer_type="person")
        )
    assert len(cat.readings) <= 2
    assert read_answer("x" * 700, PERSON).feedback.startswith("unreadable")


def test_remembered_readings_equal_fresh_ones_for_every_kind_of_question() -> None:
    """Whichever memory answers (the text's against the gold, the entry's once its decoration is
    off), the reading is the one a fresh read gives: over decorated and re-spelled texts, twin
    question objects, and a mutable question whose gold changes between two reads."""
    from agentenv.envs.media_search.grading import grade as grading
    from agentenv.envs.media_search.grading.answer_catalog import answer_catalog

    cat = answer_catalog()
    questions = [TITLE, PERSON, JUNIOR, COUNT, YEAR, AMP, PLUS, EVIL_DEAD, SHARED, CUSTOM]
    twins = [Question(**{**q.to_dict(), "aliases": tuple(q.aliases)}) for q in questions]
    texts = [
        f"{pre}{body}{post}"
        for q in questions
        for body in (q.answer, q.answer.upper(), *q.aliases, "Heat", "seven")
        for pre, post in (("", ""), ("**", "**"), ("1. ", "."), ("`", "`"))
    ]
    for _ in range(2):  # the second round reads from the memories the first one filled
        for question in questions + twins:
            for text in texts:
                assert read_answer(text, question) == grading._read(text, question, cat)
    loose = SimpleNamespace(answer="1994", aliases=[], answer_type="year")
    assert read_answer("1994", loose).correct
    loose.answer = "1995"  # a mutable question is keyed by its gold, not by the object
    assert not read_answer("1994", loose).correct
