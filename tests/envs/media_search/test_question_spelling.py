"""The question-spelling oracle: names copied from the question only where case alone differs, same tool results."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentenv  # noqa: F401 - registers the ids
from agentenv.envs.media_search.agents.oracle import MediaSearchOracle
from agentenv.envs.media_search.agents.spelling_oracle import (
    QuestionSpellingOracle,
    question_span,
    question_spelling,
)
from agentenv.evaluation.agents import UnsupportedEnv, agent_names, make_agent

WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyzéö-'", min_size=1, max_size=8).filter(
    lambda w: w.strip("-'") == w
)
NAMES = st.lists(WORDS, min_size=1, max_size=3).map(" ".join)


def _recase(text: str, flips: list[bool]) -> str:
    padded = (flips + [False] * len(text))[: len(text)]
    return "".join(c.upper() if flip else c for c, flip in zip(text, padded, strict=True))


@settings(max_examples=300, deadline=None)
@given(NAMES, st.lists(st.booleans(), max_size=30), st.lists(st.booleans(), max_size=30))
def test_a_name_the_question_holds_in_other_case_becomes_the_questions_span(
    name: str, catalog_case: list[bool], question_case: list[bool]
) -> None:
    canonical = _recase(name, catalog_case)
    typed = _recase(name, question_case)
    question = f"what was the 2005 one with {typed}, called"
    spelled = question_span(canonical, question)
    assert spelled == typed
    assert spelled.casefold() == canonical.casefold()


@settings(max_examples=300, deadline=None)
@given(NAMES, st.text(max_size=40))
def test_a_value_is_only_ever_replaced_by_itself_up_to_case(value: str, question: str) -> None:
    """Whatever the question, the result is the value or a case variant of it found in the question."""
    spelled = question_span(value, question)
    assert spelled == value or (
        spelled.casefold() == value.casefold() and spelled in question and spelled != value
    )


@pytest.mark.parametrize(
    ("value", "question"),
    [
        ("Luis Gómez", "with luis gomez"),  # accents differ
        ("Bolt", "the boltzmann film"),  # part of a longer word
        ("Bolt", "the ubolt film"),
        ("Jacob Vargas", "with jacob  vargas"),  # spacing differs
        ("Jacob Vargas", "with jacob vargaz"),  # a typo
        ("Sam Mendes", "a film by mendes"),  # only part of the name
    ],
)
def test_any_other_difference_keeps_the_catalogs_spelling(value: str, question: str) -> None:
    assert question_span(value, question) == value


def test_only_text_values_change_and_lists_change_item_by_item() -> None:
    arguments = {"cast": ["Ronny Cox", "Kurtwood Smith"], "genre": "Action", "year_min": 1987}
    question = "the action film where ronny cox and KURTWOOD SMITH are both in it"
    assert question_spelling(arguments, question) == {
        "cast": ["ronny cox", "KURTWOOD SMITH"],
        "genre": "action",
        "year_min": 1987,
    }


def test_every_episode_sees_the_same_tool_results_and_is_still_solved() -> None:
    """Side by side on the same train episodes: rewritten calls return what the catalog's calls return."""
    kwargs = {"split": "train", "compact": True, "kinds": ["lookup", "constraint"]}
    envs = (gym.make("MediaSearch-v0", **kwargs), gym.make("MediaSearch-v0", **kwargs))
    rewritten = 0
    for index in range(60):
        observations: list[list[str]] = []
        actions: list[list[str]] = []
        for env, agent in zip(envs, (MediaSearchOracle(), QuestionSpellingOracle()), strict=True):
            obs, info = env.reset(seed=index, options={"index": index})
            agent.reset(obs, info, task=env.unwrapped.task, rng=np.random.default_rng(0))
            seen, acted, done, reward = [obs], [], False, 0.0
            while not done:
                action = agent.act(obs, info)
                obs, reward, terminated, truncated, info = env.step(action)
                seen.append(obs)
                acted.append(action)
                done = terminated or truncated
            assert reward == 1.0
            observations.append(seen)
            actions.append(acted)
        assert observations[0] == observations[1]
        rewritten += actions[0] != actions[1]
    assert rewritten >= 10  # the casual questions type most names in lower case


def test_it_is_a_declared_agent_that_refuses_other_families() -> None:
    assert "oracle-question-spelling" in agent_names()
    agent = make_agent("oracle-question-spelling")
    rare = gym.make("RareDiseaseDiagnosis-v0", split="test")
    obs, info = rare.reset(seed=0)
    with pytest.raises(UnsupportedEnv, match="MediaSearch"):
        agent.reset(obs, info, task=rare.unwrapped.task, rng=np.random.default_rng(0))
