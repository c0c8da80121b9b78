"""The answer type of a question you bring, typed from the catalog rather than guessed from its text.

Why the catalog: the grader reads an answer by its type (a film, a person, a
number), and a wrong type refuses the right answer. ``"Heat"`` typed as free
text refused ``Heat (1995)`` and ``tt0113277``, the very forms the prompt asks
for. So the gold is resolved against the catalog the grader reads, with the
grader's own rules (:mod:`agentenv.envs.media_search.grading.answer_catalog`):

* a gold that is an **integer** (digits ``"7"``, ``"1,994"``, ``"1975"``, or
  English number words from zero to 999, ``"seven"``, ``"forty-two"``, ``"one
  hundred and five"``: the grader's
  :data:`~agentenv.envs.media_search.grading.grade.NUMBER_WORDS_GRAMMAR`) is a
  number: ``"year"`` for four digits from 1800 to 2100, else ``"number"``. A number wins over a film of the same
  title (``"300"`` and ``"Seven"`` are counts; write ``"300 (2006)"``, the id,
  or ``"answer_type": "title"`` for the film);
* otherwise the gold's readings are collected: a **film** (its title, ``Title
  (Year)`` or id resolves to one or more films) and a **person** (a name
  credited in the catalog);
* one reading gives the type (``"title"`` or ``"person"``); none, or both
  (``"Ed Wood"`` is a film and a person; 69 of the catalog's titles are also a
  credited name), is refused at load, naming the row, the readings and the
  fix: state ``answer_type``.

A stated ``answer_type`` is checked instead: one of :data:`USER_ANSWER_TYPES`,
and the gold must read as that type (``"text"``, graded by spelling against
the gold and its aliases, takes any gold: the escape for answers outside the
catalog).

A title gold that names one film pins it: its id joins the aliases, so
``Heat (1995)``, ``tt0113277`` and ``Heat`` all grade against that film. A
title several films share (``"Heat"``: 1972, 1987, 1995) is graded as any of
them, and the bare title is credited; give the year or the id to pin one.
An alias that names no film (``Heat '95``) is an accepted answer too, by its
spelling; an alias cannot make another film, or a title several films share,
the answer (:mod:`agentenv.envs.media_search.grading.grade`).

Example:
    >>> typed_answer("The Dark Knight", None, "row 1").answer_type
    'title'
    >>> typed_answer("Christopher Nolan", None, "row 1").answer_type
    'person'
    >>> typed_answer("1975", None, "row 1").answer_type, typed_answer("seven", None, "row 1").answer_type
    ('year', 'number')
    >>> typed_answer("Heat (1995)", None, "row 1").film_ids
    ('tt0113277',)
"""

from __future__ import annotations

from dataclasses import dataclass

from agentenv.envs.media_search.grading.answer_catalog import AnswerCatalog, answer_catalog
from agentenv.envs.media_search.grading.grade import film_refs, read_integer
from agentenv.errors import UserInputError

USER_ANSWER_TYPES = ("title", "person", "number", "year", "text")
"""What a task row's ``answer_type`` may say."""


@dataclass(frozen=True)
class TypedAnswer:
    """A gold's answer type, and the film ids it pins (empty unless it names exactly one film)."""

    answer_type: str
    film_ids: tuple[str, ...] = ()


def _number_type(answer: str) -> str | None:
    """``"year"``/``"number"`` for a gold that is an integer (digits or a number word), else None."""
    value = read_integer(answer, words=True)
    if value is None:
        return None
    return "year" if answer.isdigit() and len(answer) == 4 and 1800 <= value <= 2100 else "number"


def _readings(answer: str, cat: AnswerCatalog) -> dict[str, tuple[str, ...]]:
    """Every type the gold reads as, with the films (or people) it names."""
    found: dict[str, tuple[str, ...]] = {}
    films = film_refs(answer, cat)
    if films:
        found["title"] = films
    people = cat.people.lookup(answer).refs
    if people:
        found["person"] = tuple(people)
    return found


def _pinned(films: tuple[str, ...]) -> tuple[str, ...]:
    return films if len(films) == 1 else ()


def typed_answer(
    answer: str, stated: object, where: str, catalog: AnswerCatalog | None = None
) -> TypedAnswer:
    """The answer type of gold ``answer`` (``stated`` is the row's ``answer_type`` or None); see the module.

    Raises:
        UserInputError: a stated type outside :data:`USER_ANSWER_TYPES` or that the gold does not
            read as, or an unstated one the catalog cannot decide, naming ``where`` and the fix.
    """
    if stated is not None and stated not in USER_ANSWER_TYPES:
        raise UserInputError(
            f"{where}: field 'answer_type' must be one of {', '.join(map(repr, USER_ANSWER_TYPES))}, "
            f"got {stated!r}; or leave it out to type the answer from the catalog"
        )
    if stated == "text":
        return TypedAnswer("text")
    number = _number_type(answer)
    if stated in ("number", "year"):
        if number is None or stated == "year" and read_integer(answer, words=False) is None:
            form = (
                "digits"
                if stated == "year"
                else "digits, or number words up to 999 like 'forty-two'"
            )
            raise UserInputError(
                f"{where}: answer {answer!r} is no {stated} ({form}); fix the answer, or state "
                "another 'answer_type'"
            )
        return TypedAnswer(stated)
    if stated is None and number is not None:
        return TypedAnswer(number)
    cat = catalog if catalog is not None else answer_catalog()
    readings = _readings(answer, cat)
    if stated is not None:
        if stated not in readings:
            what = (
                "a film of the catalog" if stated == "title" else "a person credited in the catalog"
            )
            raise UserInputError(
                f"{where}: answer {answer!r} is not {what}, as 'answer_type': {stated!r} says; "
                'fix the spelling, or state "answer_type": "text" to grade it by spelling alone'
            )
        return TypedAnswer(stated, _pinned(readings[stated]) if stated == "title" else ())
    if len(readings) == 1:
        ((kind, refs),) = readings.items()
        return TypedAnswer(kind, _pinned(refs) if kind == "title" else ())
    if not readings:
        raise UserInputError(
            f"{where}: answer {answer!r} is no film title, person or number of the catalog, so "
            "no answer could be graded against it; fix the spelling (a title may be written "
            '\'Title (Year)\' or as its id, tt0113277), or state "answer_type": "text" to '
            "grade it by spelling alone"
        )
    raise UserInputError(
        f"{where}: answer {answer!r} is both a film and a person of the catalog; state which "
        'with "answer_type": "title" or "answer_type": "person"'
    )
