"""The pre-training drills teach copying without rehearsing any held-out question."""

from __future__ import annotations

import gymnasium as gym
import pytest

from agentenv.lessons.scratch.drills import (
    DrillMix,
    drill_conversations,
    held_out_title_ids,
    recall_drills,
    repeat_drills,
)


@pytest.fixture(scope="module")
def env():
    return gym.make("agentenv:MediaSearch-v0", compact=True)


@pytest.fixture(scope="module")
def held_out():
    ids: set[str] = set()
    for split in ("validation", "test"):
        ids |= held_out_title_ids(gym.make("agentenv:MediaSearch-v0", split=split).unwrapped.tasks)
    return frozenset(ids)


def test_a_repeat_drill_is_a_list_then_the_same_list(env) -> None:
    drills = list(repeat_drills(env, 50, seed=3))
    assert len(drills) == 50
    for drill in drills:
        first, second = drill.split("\n\n")
        assert first == second
        assert 4 <= len(first.splitlines()) <= 10
    assert drills == list(repeat_drills(env, 50, seed=3))  # seeded
    assert drills != list(repeat_drills(env, 50, seed=4))


def test_no_drill_asks_about_a_validation_or_test_title(env, held_out) -> None:
    """Held-out titles may show up in a search listing (the tool's output, as for any agent), but no
    drill lists them for copying, asks about them or answers with them."""
    assert len(held_out) > 100
    catalog = env.unwrapped.catalog
    by_title: dict[str, set[str]] = {}
    for t in catalog.titles:
        by_title.setdefault(t.title, set()).add(t.id)
    only_held = {name for name, ids in by_title.items() if ids <= held_out}
    for drill in repeat_drills(env, 300, seed=0, exclude=held_out):
        items = set(drill.split("\n\n")[0].splitlines())
        assert not items & held_out and not items & only_held, items & (held_out | only_held)
    for drill in recall_drills(env, 100, seed=0, exclude=held_out):
        for line in drill.split("\n\n")[1].splitlines():
            field, rest = line.split(" of ", 1)
            # "title of <id>: <title>"; otherwise "<field> of <title>: <id, name or year>"
            subject = rest.split(": ", 1)[0] if field == "title" else rest.rsplit(": ", 1)[0]
            assert subject not in held_out and subject not in only_held, line
    for conversation in drill_conversations(
        env, DrillMix(50, 50, 50, 0, 0), seed=0, exclude=held_out
    ):
        question = conversation[1]["content"]
        named = {name for name in only_held if len(name) > 12 and name in question}
        # A longer title that is not held out may contain a held-out one ("The Bad News Bears in
        # Breaking Training"): a held-out name inside it is not a question about the held-out film.
        inside_other = {
            name
            for name in named
            if any(
                name in other and other in question for other in by_title if other not in only_held
            )
        }
        assert not named - inside_other, question
        for message in conversation[2:]:
            for call in message.get("tool_calls") or []:
                assert call["function"]["arguments"].get("title_id") not in held_out


def test_recall_answers_are_copied_from_the_lines_above(env) -> None:
    for drill in recall_drills(env, 20, seed=1):
        listing, questions = drill.split("\n\n")
        for line in questions.splitlines():
            answer = (
                line.split(": ", 1)[1] if line.startswith("title of") else line.rsplit(": ", 1)[1]
            )
            assert answer in listing, line
