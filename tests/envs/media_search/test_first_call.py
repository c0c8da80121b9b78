"""The ``first_call`` component: credit for the gold plan's first call, by allow-list, and the preset that weights it."""

from __future__ import annotations

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentenv  # noqa: F401 - registers the ids
from agentenv.engine.actions import answer, tool_call
from agentenv.envs.media_search.grading.first_call import same_call
from agentenv.envs.media_search.tools.film_tools import FilterArgs, SearchArgs

MODELS = {"search": SearchArgs, "filter_titles": FilterArgs}
FILTER = {
    "tool": "filter_titles",
    "arguments": {
        "cast": ["Kristen Stewart", "Ewan McGregor"],
        "director": "Doug Liman",
        "genre": "Action",
        "year_min": 2000,
        "limit": 5,
    },
}


@pytest.fixture(scope="module")
def env():  # type: ignore[no-untyped-def]
    return gym.make("MediaSearch-v0", split="test")


def _episode(env, first: str, reward: str | None = None):  # type: ignore[no-untyped-def]
    if reward is not None:
        env = gym.make("MediaSearch-v0", split="test", reward=reward)
    env.reset(seed=0, options={"index": 3})
    env.step(first)
    return env.step(answer("not the film"))


def test_the_gold_first_call_is_credited_on_every_planned_question(env) -> None:  # type: ignore[no-untyped-def]
    credited = 0
    for index in range(40):
        env.reset(seed=0, options={"index": index})
        step = env.unwrapped.task.case.plan[0]
        env.step(tool_call(step["tool"], **step["arguments"]))
        _, reward, _, _, info = env.step(answer("not the film"))
        credited += info["reward_components"]["first_call"]
        assert reward == info["reward_components"]["accuracy"]  # strict does not weight it
    assert credited == 40


def test_anything_else_first_is_not_credited(env) -> None:  # type: ignore[no-untyped-def]
    env.reset(seed=0, options={"index": 3})
    gold = env.unwrapped.task.case.plan[0]
    wrong_value = {**gold["arguments"], "director": "Someone Else"}
    for first in (
        tool_call("search", query=env.unwrapped.task.prompt[:200]),  # another tool
        tool_call(gold["tool"], **wrong_value),  # another value
        tool_call(gold["tool"], **gold["arguments"], year_min="x"),  # refused arguments
        "no tags at all",  # not a call; the next call would not be the first either
    ):
        components = _episode(env, first)[4]["reward_components"]
        assert components["first_call"] == 0.0, first
    env.reset(seed=0, options={"index": 3})
    _, reward, terminated, _, info = env.step(answer("x"))  # an answer first: no call at all
    assert terminated and reward == 0.0 and info["reward_components"]["first_call"] == 0.0


def test_the_preset_adds_two_tenths_for_the_right_first_call(env) -> None:  # type: ignore[no-untyped-def]
    env.reset(seed=0, options={"index": 3})
    gold = env.unwrapped.task.case.plan[0]
    _, reward, *_ = _episode(env, tool_call(gold["tool"], **gold["arguments"]), "first-call-credit")
    assert reward == 0.2


texts = st.sampled_from(
    [str.upper, str.lower, str.title, lambda s: f"  {s} ", lambda s: s.replace(" ", "   ")]
)


@settings(max_examples=200, deadline=None)
@given(case=texts, order=st.permutations([0, 1]), limit=st.integers(1, 20))
def test_spelling_case_order_and_how_many_to_show_do_not_matter(case, order, limit) -> None:  # type: ignore[no-untyped-def]
    cast = [case(FILTER["arguments"]["cast"][i]) for i in order]
    args = {**FILTER["arguments"], "cast": cast, "director": case("Doug Liman"), "limit": limit}
    import json

    assert same_call("filter_titles", json.dumps(args), FILTER, MODELS)


@settings(max_examples=200, deadline=None)
@given(
    field=st.sampled_from(["cast", "director", "genre", "year_min", "year_max", "min_rating"]),
    shift=st.integers(1, 30),
)
def test_any_other_constraint_is_another_call(field, shift) -> None:  # type: ignore[no-untyped-def]
    import json

    args = dict(FILTER["arguments"])
    if field == "cast":
        args["cast"] = args["cast"][:1]
    elif field in ("director", "genre"):
        args[field] = "Drama" if field == "genre" else "Doug Limann"
    elif field == "min_rating":
        args["min_rating"] = min(10.0, shift / 3)
    else:
        args[field] = 1900 + shift
    assert not same_call("filter_titles", json.dumps(args), FILTER, MODELS)
    assert not same_call("search", json.dumps(args), FILTER, MODELS)
    assert not same_call("filter_titles", "[1, 2]", FILTER, MODELS)
