"""Grading: normalisation, aliases, ids, numbers and years, and no credit for hedges."""

from __future__ import annotations

import pytest

from agentenv.envs.media_search.grading import (
    grade_answer,
    normalize_answer,
    number_words,
    parse_number,
)
from agentenv.envs.media_search.questions import Question

TITLE = Question("q1", "Which 2010 film ...?", "The Dark Knight Rises",
                 ("tt1345836", "The Dark Knight Rises (2012)"), "title", "constraint")
PERSON = Question("q2", "Who directed ...?", "Pedro Almodóvar", (), "person", "lookup")
JUNIOR = Question("q3", "Who is in ...?", "Robert Downey Jr.", (), "person", "lookup")
COUNT = Question("q4", "How many ...?", "7", ("seven",), "number", "count")
YEAR = Question("q5", "In what year ...?", "1994", (), "year", "lookup")
AMP = Question("q6", "Which ...?", "Romeo & Juliet", ("tt0117509",), "title", "lookup")


@pytest.mark.parametrize(("text", "expected"), [
    ("The Dark Knight Rises", True),
    ("  the dark knight rises. ", True),
    ("Dark Knight Rises", True),
    ('"The Dark Knight Rises"', True),
    ("TT1345836", True),
    ("The Dark Knight Rises (2012)", True),
    ("The Dark Knight", False),
    ("The Dark Knight Rises or Inception", False),
    ("", False),
])
def test_title_answers(text, expected):
    assert grade_answer(text, TITLE) is expected


@pytest.mark.parametrize(("question", "text", "expected"), [
    (PERSON, "Pedro Almodovar", True),
    (PERSON, "pedro almodóvar", True),
    (PERSON, "Almodóvar", False),
    (JUNIOR, "Robert Downey, Jr.", True),
    (JUNIOR, "Robert Downey Jr", True),
    (JUNIOR, "Robert Downey", False),
    (AMP, "Romeo and Juliet", True),
    (AMP, "romeo & juliet", True),
    (AMP, "tt0117509", True),
])
def test_text_answers(question, text, expected):
    assert grade_answer(text, question) is expected


@pytest.mark.parametrize(("text", "expected"), [
    ("7", True), ("seven", True), ("Seven.", True), ("7 films", True), ("There are 7 (seven) films.", True),
    ("7.0", True), ("8", False), ("7 or 8", False), ("six or seven", False), ("many", False), ("", False),
])
def test_number_answers(text, expected):
    assert grade_answer(text, COUNT) is expected


@pytest.mark.parametrize(("text", "expected"), [
    ("1994", True), ("In 1994.", True), ("1,994", True), ("1995", False), ("the 1990s", False),
    ("1994 or 1995", False), ("'94", False),
])
def test_year_answers(text, expected):
    assert grade_answer(text, YEAR) is expected


def test_normalisation_rules():
    assert normalize_answer("A Beautiful Mind") == "beautiful mind"
    assert normalize_answer("An  Education") == "education"
    assert normalize_answer("The") == "the"
    assert normalize_answer("Amélie") == "amelie"
    assert normalize_answer("Schindler's List") == normalize_answer("Schindlers List")
    assert normalize_answer("Crouching Tiger, Hidden Dragon") == "crouching tiger hidden dragon"
    assert normalize_answer("Fast & Furious") == "fast and furious"


def test_number_words():
    assert [number_words(n) for n in (0, 13, 20, 21, 99)] == ["zero", "thirteen", "twenty", "twenty-one",
                                                               "ninety-nine"]
    assert all(parse_number(number_words(n)) == n for n in range(100))
    assert parse_number("twenty one") == 21 and parse_number("twenty") == 20


def test_grading_is_strict_about_types():
    with pytest.raises(TypeError):
        grade_answer(7, COUNT)  # type: ignore[arg-type]
