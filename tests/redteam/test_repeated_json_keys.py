"""A JSON object that names a key twice has no one reading, so it is refused wherever it is graded.

Python's ``json`` keeps the last value, other parsers the first: ``{"answer": "4", "answer":
"5"}`` would be graded on whichever the reader picked. The properties generate objects with a
repeated key at any depth, in tool calls, JSON answers and OpenAI-style tool-call arguments.
"""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentenv  # noqa: F401 - registers the ids
from agentenv.engine.actions import action_from_message
from agentenv.engine.parsing import ParseError, parse_action
from agentenv.errors import UserInputError

_KEYS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_\u00e9\u4e2d", min_size=1, max_size=8)
_LEAVES = st.one_of(st.integers(-1000, 1000), st.text(max_size=10), st.booleans(), st.none())


def _object(pairs: list[tuple[str, str]]) -> str:
    return "{" + ", ".join(f"{json.dumps(k)}: {v}" for k, v in pairs) + "}"


@st.composite
def object_with_a_repeated_key(draw: st.DrawFn) -> str:
    """A JSON object text, nested up to three levels, in which one object names one key twice."""
    key = draw(_KEYS)
    others = draw(st.lists(_KEYS.filter(lambda k: k != key), max_size=3, unique=True))
    pairs = [(k, json.dumps(draw(_LEAVES))) for k in others]
    for _ in range(2):
        pairs.insert(draw(st.integers(0, len(pairs))), (key, json.dumps(draw(_LEAVES))))
    text = _object(pairs)
    for _ in range(draw(st.integers(0, 2))):  # the repeat may sit deeper inside
        text = _object([(draw(_KEYS), text)])
    return text


@settings(max_examples=300, deadline=None)
@given(object_with_a_repeated_key())
def test_a_tool_call_with_a_repeated_key_is_a_parse_error(obj: str) -> None:
    for action in (
        f'<tool_call>{{"name": "search", "arguments": {obj}}}</tool_call>',
        f"<tool_call>{obj}</tool_call>",
        obj,
    ):
        parsed = parse_action(action)
        assert isinstance(parsed, ParseError), action
        assert "appears twice in one object" in str(parsed)


@pytest.fixture(scope="module")
def media() -> gym.Env:
    return gym.make("MediaSearch-v0", split="test")


@pytest.mark.parametrize(
    "action",
    [
        '{"answer": "wrong", "answer": "%s"}',
        '{"answer": "%s", "answer": "wrong"}',
        '<tool_call>{"name": "search", "name": "search", "arguments": {"query": "%s"}}</tool_call>',
    ],
)
def test_an_action_naming_a_key_twice_is_invalid_whatever_the_order(
    media: gym.Env, action: str
) -> None:
    _, info = media.reset(options={"index": 7})
    gold = media.unwrapped.task.gold["answer"]
    obs, _, terminated, _, info = media.step(action % gold)
    assert not terminated
    assert "appears twice in one object" in obs
    assert "parse_error" in info


def test_openai_arguments_naming_a_key_twice_reach_the_env_unrepaired() -> None:
    """A trainer's message: the arguments string goes to the env as written, which refuses it."""
    message = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"function": {"name": "search", "arguments": '{"query": "heat", "query": "x"}'}}
        ],
    }
    parsed = parse_action(action_from_message(message, "native"))
    assert isinstance(parsed, ParseError)
    assert "'query' appears twice" in str(parsed)


@pytest.mark.parametrize(
    ("env_id", "rows", "said"),
    [
        (
            "MediaSearch-v0",
            '{"question": "who directed heat (1995)?", "answer": "Michael Mann"}\n'
            '{"question": "who directed alien?", "answer": "Ridley Scott", "answer": "Michael Mann"}\n',
            r"t.jsonl:2: the key 'answer' appears twice",
        ),
        (
            "RareDiseaseDiagnosis-v0",
            '{"phenotypes": ["HP:0001166"], "diagnosis": ["OMIM:154700"], '
            '"diagnosis": ["OMIM:100600"]}\n',
            r"t.jsonl:1: .*the key 'diagnosis' appears twice",
        ),
    ],
)
def test_a_task_row_naming_a_field_twice_is_refused_naming_the_line(
    tmp_path: Path, env_id: str, rows: str, said: str
) -> None:
    tasks = tmp_path / "t.jsonl"
    tasks.write_text(rows, encoding="utf-8")
    with pytest.raises(UserInputError, match=said):
        gym.make(env_id, tasks=str(tasks))
