"""A person gold's aliases are accepted answers, also where an alias names another credited person.

Why: a task row lists "every accepted answer in 'aliases'" (the loader's own advice), and a
question can have two right people (*Fargo* was directed by Joel and Ethan Coen). The grader
read an answer that names a credited person only against the gold's person, so such an alias
was ignored, for ``"person"`` and even for ``"text"`` rows (graded "by spelling against the gold
and its aliases"). An alias adds a person; it never replaces the gold (unlike a foreign film id,
which is refused at load).
"""

from __future__ import annotations

from types import SimpleNamespace

import gymnasium as gym
from hypothesis import given, settings
from hypothesis import strategies as st

import agentenv  # noqa: F401 - registers the ids
from agentenv.engine.actions import answer
from agentenv.envs.media_search.grading.answer_catalog import answer_catalog
from agentenv.envs.media_search.grading.grade import read_answer
from agentenv.envs.media_search.tasks.user_tasks import question_from_dict

FARGO = "Who directed Fargo (1996)?"


def test_an_alias_that_names_another_person_is_credited() -> None:
    q = question_from_dict(
        {"question": FARGO, "answer": "Joel Coen", "aliases": ["Ethan Coen", "the Coens"]}
    )
    assert q.answer_type == "person"
    for written in ("Joel Coen", "ethan coen", "**Ethan Coen**", "The Coens"):
        assert read_answer(written, q).correct, written
    wrong = read_answer("Christopher Nolan", q)
    assert not wrong.correct and wrong.feedback == "read as the person 'Christopher Nolan'"
    assert read_answer("Ethan Coen", q).feedback == "read as the person 'Ethan Coen'"


def test_a_text_row_whose_gold_is_a_person_credits_its_aliases_by_spelling() -> None:
    q = question_from_dict(
        {
            "question": "Who wrote it?",
            "answer": "Christopher Nolan",
            "answer_type": "text",
            "aliases": ["Jonathan Nolan"],
        }
    )
    assert q.answer_type == "text"
    assert read_answer("Jonathan Nolan", q).correct and read_answer("christopher nolan", q).correct
    assert not read_answer("Joel Coen", q).correct


def test_through_the_env() -> None:
    env = gym.make("MediaSearch-v0")
    task = {"question": FARGO, "answer": "Joel Coen", "aliases": ["Ethan Coen"]}
    for written, reward in (("Ethan Coen", 1.0), ("Joel Coen", 1.0), ("Frances McDormand", 0.0)):
        env.reset(options={"task": task})
        assert env.step(answer(written))[1] == reward, written


def _named_people(limit: int = 3000) -> list[str]:
    """Credited names that read as exactly their own person."""
    cat = answer_catalog()
    names = []
    for person in cat.catalog.people.values():
        if len(names) >= limit:
            break
        if cat.people.lookup(person.name).how == "exact" and cat.people.lookup(person.name).ref:
            names.append(person.name)
    return names


PEOPLE = _named_people()


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(PEOPLE), st.sampled_from(PEOPLE), st.sampled_from(PEOPLE))
def test_the_gold_and_its_alias_people_are_credited_and_no_one_else(gold, alias, other) -> None:
    """Searched over credited names: exactly the gold's and the alias's people are credited."""
    q = SimpleNamespace(answer=gold, aliases=(alias,), answer_type="person")
    assert read_answer(gold, q).correct and read_answer(alias.upper(), q).correct
    cat = answer_catalog()
    ref = cat.people.lookup(other).ref
    credited = {cat.people.lookup(gold).ref, cat.people.lookup(alias).ref}
    assert read_answer(other, q).correct is (ref in credited), other
    no_alias = SimpleNamespace(answer=gold, aliases=(), answer_type="person")
    assert read_answer(other, no_alias).correct is (ref == cat.people.lookup(gold).ref)
