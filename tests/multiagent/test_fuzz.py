"""Fuzzed actions from either side never raise, and every unreadable one is explained.

Non-``str`` actions are a caller's bug, not agent text: they raise ``TypeError``
(``tests/core/test_hostile_actions.py``), so the fuzzed actions here are all text.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentenv.multiagent.base import DialogueEnv

from ._helpers import FRAGMENTS

TAGS = (
    "<say>",
    "</say>",
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<answer>",
    "</answer>",
    "{",
    "}",
    '"name"',
    '"arguments"',
    "HP:0001250",
    "seizures",
    "1995",
    "directed by",
    "\n",
    ". ",
)
piece = st.one_of(st.sampled_from(FRAGMENTS), st.sampled_from(TAGS), st.text(max_size=40))
action = st.one_of(
    st.lists(piece, max_size=6).map("".join),
    st.builds(lambda body: f"<say>{body}</say>", st.lists(piece, max_size=4).map("".join)),
)
FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _play(env: DialogueEnv, actions: list, scripted_other: bool) -> None:
    """Drive the env with ``actions`` for the lead (and for the other side unless ``scripted_other``)."""
    env.reset(seed=0, options={"index": 0})
    other = env.default_policy(env.other)
    queue = list(actions)
    for agent in env.agent_iter(60):
        obs, _, terminated, truncated, info = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        if agent == env.other and scripted_other:
            move = other.act(obs, info)
        elif queue:
            move = queue.pop(0)
        else:
            move = "<answer>x</answer>"
        env.step(move)
        info = env.infos.get(agent, {})
        if "parse_error" in info:
            assert info["parse_error"] and env.observe(agent).startswith("Error: ")
    assert env.agents == []


@FUZZ
@given(st.lists(action, max_size=8))
def test_fuzzed_doctor_and_patient(dx: DialogueEnv, actions: list) -> None:
    _play(dx, actions, scripted_other=False)


@FUZZ
@given(st.lists(action, max_size=8))
def test_fuzzed_doctor_scripted_patient(dx: DialogueEnv, actions: list) -> None:
    _play(dx, actions, scripted_other=True)


@FUZZ
@given(st.lists(action, max_size=8))
def test_fuzzed_user_and_assistant(media: DialogueEnv, actions: list) -> None:
    _play(media, actions, scripted_other=False)


@FUZZ
@given(st.lists(action, max_size=8))
def test_fuzzed_assistant_scripted_user(media: DialogueEnv, actions: list) -> None:
    _play(media, actions, scripted_other=True)
