"""OpenAI assistant messages as actions: what a chat-completions server returns, sent as JSON.

DESIGN.md lists "OpenAI-style JSON" among the action forms; a user's first try is
``json.dumps(choice.message)``. Its ``tool_calls`` are the action; without them its
``content`` is read as action text, so ``<answer>…</answer>`` answers and plain content
stays an explained error (a guess at intent would train nothing).
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from agentenv.engine.parsing import Answer, ParseError, ToolCall, ToolCalls, parse_action

from .toy_env import SquareEnv


def _call(name: str, arguments: Any, call_id: str = "call_0") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _message(**fields: Any) -> str:
    """An assistant message as the OpenAI SDK's ``model_dump()`` writes it (empty extras included)."""
    base = {
        "role": "assistant",
        "content": None,
        "refusal": None,
        "annotations": [],
        "audio": None,
        "function_call": None,
        "tool_calls": None,
    }
    return json.dumps({**base, **fields})


def test_assistant_message_with_tool_calls_is_a_call() -> None:
    action = _message(
        tool_calls=[
            _call("search", '{"query": "Heat", "k": 3}'),
            _call("get_title", '{"title_id": "t1"}', "c2"),
        ]
    )
    parsed = parse_action(action)
    assert parsed == ToolCalls(
        calls=(
            ToolCall("search", {"query": "Heat", "k": 3}),
            ToolCall("get_title", {"title_id": "t1"}),
        ),
        content="",
        reasoning=None,
    )


def test_content_and_reasoning_are_kept() -> None:
    parsed = parse_action(
        _message(
            content="Let me look.",
            reasoning_content="Search first.",
            tool_calls=[_call("search", '{"query": "x"}')],
        )
    )
    assert isinstance(parsed, ToolCalls)
    assert (parsed.content, parsed.reasoning) == ("Let me look.", "Search first.")


def test_minimal_message_and_object_arguments() -> None:
    action = json.dumps(
        {
            "role": "assistant",
            "tool_calls": [{"type": "function", "function": {"name": "s", "arguments": {"q": 1}}}],
        }
    )
    assert parse_action(action) == ToolCalls(calls=(ToolCall("s", {"q": 1}),))


@pytest.mark.parametrize(
    "content",
    [
        "<answer>Heat</answer>",
        "<think>two hops</think>\n<answer>Heat</answer>",
        [{"type": "text", "text": "<answer>Heat</answer>"}],
    ],
)
def test_content_with_answer_tags_is_an_answer(content: Any) -> None:
    parsed = parse_action(_message(content=content))
    assert isinstance(parsed, Answer) and parsed.text == "Heat"


def test_content_with_tool_call_tags_is_a_call() -> None:
    parsed = parse_action(
        _message(content='<tool_call>{"name": "s", "arguments": {}}</tool_call>', tool_calls=[])
    )
    assert parsed == ToolCalls(calls=(ToolCall("s", {}),))


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (_message(content="Heat"), "plain content is not a final answer"),
        (_message(), "neither"),
        (json.dumps({"role": "user", "content": "<answer>x</answer>"}), "role 'user'"),
        (_message(refusal="I can't"), "['refusal'] set"),
        (_message(content="<answer>x</answer>", tool_calls=[_call("s", "{}")]), "not both"),
        (_message(tool_calls=[_call("s", '{"q": ')]), "bad JSON in the arguments of tool call 1"),
        (_message(tool_calls=[{**_call("s", "{}"), "type": "custom"}]), "tool call 1 must be"),
        (_message(tool_calls=[{**_call("s", "{}"), "extra": 1}]), "unexpected keys ['extra']"),
        (_message(tool_calls="search"), "must be a non-empty list"),
        (_message(content=7), "must be a string"),
        (_message(content="<answer>x</answer>", logprobs=None), "unexpected keys ['logprobs']"),
        (_message(content="<answer>x</answer>", reasoning_content=3), "reasoning_content"),
    ],
)
def test_bad_messages_are_explained(message: str, reason: str) -> None:
    parsed = parse_action(message)
    assert isinstance(parsed, ParseError), parsed
    assert reason in parsed.reason


def test_json_whose_strings_hold_tags_is_still_json() -> None:
    """A query that mentions a tag does not send the JSON action down the tagged path."""
    action = json.dumps(
        {"tool_calls": [{"name": "search", "arguments": {"query": "<answer> tag"}}]}
    )
    assert parse_action(action) == ToolCalls(calls=(ToolCall("search", {"query": "<answer> tag"}),))


def test_env_runs_an_openai_episode() -> None:
    env = SquareEnv()
    env.reset(seed=0, options={"index": 3})
    obs, reward, terminated, _, info = env.step(_message(tool_calls=[_call("square", '{"n": 3}')]))
    assert obs == '{"n": 3, "square": 9}' and not terminated and "parse_error" not in info
    assert info["messages"][-2]["tool_calls"][0]["function"] == {
        "name": "square",
        "arguments": '{"n": 3}',
    }
    _, reward, terminated, _, info = env.step(_message(content="<answer>9</answer>"))
    assert (reward, terminated) == (1.0, True)


@pytest.mark.parametrize(
    "content",
    ["<think>" * 4000, "<answer>" * 3500, "<tool_call>" * 2500, "x" * 32_000],
)
def test_hostile_content_is_fast(content: str) -> None:
    """Linear time: a 32 KB message of tag floods parses well inside DESIGN.md's 20 ms budget x 10."""
    action = _message(content=content)
    assert len(action) <= 32_768
    start = time.perf_counter()
    parsed = parse_action(action, max_length=32_768)
    assert time.perf_counter() - start < 0.2
    assert isinstance(parsed, ParseError)
