"""Checks that keep bad demonstrations out of SFT data.

Why an id check: the oracle follows the gold plan, whose calls carry the
gold's ids. When the plan's search does not list the film (BM25 ranks other
titles first), the oracle still opens the right id, one it has never seen in
the conversation. Training on such a turn teaches the policy to invent ids.
An id argument (named ``id`` or ``*_id``) is *grounded* when its value
appears in the user prompt or in an earlier tool or env message; the system
prompt does not count, since its examples are not evidence.

Example:
    >>> msgs = [{"role": "system", "content": "ids look like tt1"},
    ...         {"role": "user", "content": "Who directed Inception?"},
    ...         {"role": "assistant", "content": "", "tool_calls": [
    ...             {"function": {"name": "get_title", "arguments": {"title_id": "tt1"}}}]}]
    >>> ungrounded_ids(msgs)
    ['tt1']
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any


def _is_id_argument(name: str) -> bool:
    return name == "id" or name.endswith("_id") or name.endswith("_ids")


def _id_values(arguments: Mapping[str, Any]) -> list[str]:
    values: list[str] = []
    for name, value in arguments.items():
        if not _is_id_argument(name):
            continue
        items = value if isinstance(value, list) else [value]
        values.extend(str(v) for v in items if v is not None)
    return values


def ungrounded_ids(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """Id arguments of tool calls whose value did not appear before the call (system prompt excluded)."""
    seen: list[str] = []
    missing: list[str] = []
    for message in messages:
        if message.get("role") == "system":
            continue
        for call in message.get("tool_calls") or ():
            arguments = call["function"].get("arguments") or {}
            if isinstance(arguments, str):
                arguments = json.loads(arguments)
            evidence = "\n".join(seen)
            missing.extend(v for v in _id_values(arguments) if v not in evidence)
        if message.get("role") != "assistant" and isinstance(message.get("content"), str):
            seen.append(message["content"])
    return missing
