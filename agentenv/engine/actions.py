"""Render canonical action text for scripted agents.

There is one action type, ``str``, exactly as an LLM emits it. Scripted agents
(oracle, baselines, tests) build that text with these helpers, so they go
through the same parser as a model does.

Example:
    >>> tool_call("search", query="Inception", k=3)
    '<tool_call>\\n{"name": "search", "arguments": {"query": "Inception", "k": 3}}\\n</tool_call>'
    >>> answer("Christopher Nolan")
    '<answer>Christopher Nolan</answer>'
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from agentenv.engine.strict_json import loads_unique


def tool_call(name: str, /, **arguments: Any) -> str:
    """One Hermes/Qwen3 ``<tool_call>`` block."""
    payload = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    return f"<tool_call>\n{payload}\n</tool_call>"


def tool_calls(calls: Iterable[tuple[str, Mapping[str, Any]]]) -> str:
    """Several calls in one action; the env runs them in order."""
    return "\n".join(tool_call(name, **dict(args)) for name, args in calls)


def answer(text: str | Iterable[str]) -> str:
    """A final ``<answer>``; a list (e.g. ranked diagnoses) is written one per line."""
    body = text if isinstance(text, str) else "\n".join(text)
    return f"<answer>{body}</answer>"


def think(text: str, action: str) -> str:
    """Prefix an action with a ``<think>`` block."""
    return f"<think>\n{text}\n</think>\n\n{action}"


def action_from_message(
    message: Mapping[str, Any], tool_format: Literal["native", "hermes"]
) -> str:
    """The action text of one OpenAI assistant message, as an env's parser reads it.

    One rule set for every path that turns a model's reply into an action (the ``llm``
    eval agent, the TRL reward's replay), so that training and evaluation grade the
    same text: with ``tool_format="native"`` the message's ``tool_calls`` become
    canonical ``<tool_call>`` blocks after its content; with ``"hermes"`` the content
    carries its own calls (parsed calls are rendered only when the content is empty);
    without calls the content is the action. ``reasoning_content`` (or ``reasoning``)
    becomes a leading ``<think>`` block. Arguments that are not a JSON object go to
    the env's parser as they came, unrepaired.

    Example:
        >>> print(action_from_message({"content": None, "tool_calls": [
        ...     {"function": {"name": "search", "arguments": '{"query": "x"}'}}]}, "native"))
        <tool_call>
        {"name": "search", "arguments": {"query": "x"}}
        </tool_call>
    """
    problem = message_problem(message)
    if problem is not None:
        raise ValueError(f"not an assistant message the env can read: {problem}")
    content = message.get("content") or ""
    if isinstance(content, list):  # content parts: the text ones
        content = "".join(p["text"] for p in content if p.get("type") == "text")
    calls = message.get("tool_calls") or []
    if calls and (tool_format == "native" or not content.strip()):
        # Hermes text normally carries its own calls; a server that parsed them anyway still gets them rendered.
        action = "\n".join(
            ([content.strip()] if content.strip() else []) + [_render_call(c) for c in calls]
        )
    else:
        action = content
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    return (
        think(str(reasoning).strip(), action) if reasoning and "<think>" not in action else action
    )


def message_problem(message: Any) -> str | None:
    """Why ``message`` is not an OpenAI assistant message by its grammar, or None.

    Content is a string, null or a list of parts (a text part is ``{"type": "text", "text":
    str}``); ``tool_calls`` a list of ``{"function": {"name": str, "arguments": str or object}}``;
    reasoning a string. Why a grammar: ``str()`` of anything else was graded, so a dict content
    holding ``<answer>5</answer>`` scored as that answer.

    >>> message_problem({"role": "assistant", "content": "<answer>5</answer>"}) is None
    True
    >>> message_problem({"role": "assistant", "content": {"note": "<answer>5</answer>"}})
    "'content' must be a string, null or a list of parts, got dict"
    """
    if not isinstance(message, Mapping):
        return f"a message is an object, got {type(message).__name__}"
    content = message.get("content")
    if isinstance(content, list):
        for i, part in enumerate(content):
            if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
                return f"'content'[{i}] must be a part object with a 'type'"
            if part["type"] == "text" and not isinstance(part.get("text"), str):
                return f"'content'[{i}] is a text part without a string 'text'"
    elif content is not None and not isinstance(content, str):
        return f"'content' must be a string, null or a list of parts, got {type(content).__name__}"
    calls = message.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        return f"'tool_calls' must be a list, got {type(calls).__name__}"
    for i, call in enumerate(calls or []):
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            return f"'tool_calls'[{i}] needs a 'function' object with a string 'name'"
        arguments = function.get("arguments", "{}")
        if not isinstance(arguments, (str, Mapping)):
            return f"'tool_calls'[{i}].function.arguments must be a JSON string or an object"
        if isinstance(arguments, Mapping):
            try:  # an object's keys are strings and its values JSON (no bytes, sets, cycles)
                json.dumps(arguments, allow_nan=False)
            except (TypeError, ValueError, RecursionError):
                return f"'tool_calls'[{i}].function.arguments is not a JSON object"
            if not all(isinstance(key, str) for key in arguments):
                return f"'tool_calls'[{i}].function.arguments has keys that are not strings"
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if value is not None and not isinstance(value, str):
            return f"{key!r} must be a string, got {type(value).__name__}"
    return None


def _render_call(call: Mapping[str, Any]) -> str:
    function = call.get("function") or {}
    name = str(function.get("name", ""))
    raw = function.get("arguments", "{}")
    args = raw if isinstance(raw, Mapping) else _loads_object(raw)
    if args is None:  # not a JSON object: hand it to the env's parser as it came, unrepaired
        text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
        return f'<tool_call>\n{{"name": {json.dumps(name, ensure_ascii=False)}, "arguments": {text}}}\n</tool_call>'
    return tool_call(name, **args)


def _loads_object(raw: Any) -> dict[str, Any] | None:
    try:
        value = loads_unique(raw) if isinstance(raw, str) else None
    except (ValueError, RecursionError):  # a key twice, too deep: the env's parser explains it
        return None
    return value if isinstance(value, dict) else None
