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
from typing import Any


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
