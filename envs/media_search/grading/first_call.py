"""Was the agent's first tool call the gold plan's first call? The ``first_call`` reward component.

Why: GRPO on a small model that rarely answers right gets no gradient from accuracy alone (most
groups score 0 everywhere), yet the right first call (the search or filter the question needs)
already appears in a third to two thirds of its rollouts. Crediting that call gives the groups
something to compare. The ``first-call-credit`` reward preset weights it (0.2) beside accuracy;
``strict`` logs it only.

What counts as the same call, by allow-list: the same tool, and the same arguments once both are
validated by that tool's own argument model (defaults filled in), compared on the fields that say
*what* is looked up: every field but the ones that only say how much to show (``k``,
``limit``). Text is compared casefolded with runs of whitespace as one space, and a list of
names (``cast``) as a set. Anything else (another tool, another value, an argument the model
refuses, no tool call, a question without a gold plan) scores 0.

Example:
    >>> from agentenv.envs.media_search.tools.film_tools import SearchArgs
    >>> models = {"search": SearchArgs}
    >>> gold = {"tool": "search", "arguments": {"query": "Sunset Boulevard", "k": 5}}
    >>> same_call("search", '{"query": "sunset  boulevard"}', gold, models)
    True
    >>> same_call("search", '{"query": "Sunset Blvd"}', gold, models)
    False
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

PRESENTATION_FIELDS = frozenset({"k", "limit"})
"""Arguments that change how many results show, not which: left out of the comparison."""


def _canonical(value: Any) -> Any:
    if isinstance(value, str):
        return " ".join(value.casefold().split())
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return frozenset(_canonical(v) for v in value)
    return value


def _identity(model: type[BaseModel], arguments: Mapping[str, Any]) -> dict[str, Any] | None:
    """The call's identifying fields, canonical; None when the model refuses the arguments."""
    try:
        validated = model.model_validate(dict(arguments))
    except (ValidationError, TypeError, ValueError):
        return None
    return {
        name: _canonical(value)
        for name, value in validated.model_dump().items()
        if name not in PRESENTATION_FIELDS
    }


def same_call(
    name: str,
    arguments_json: str,
    gold: Mapping[str, Any],
    models: Mapping[str, type[BaseModel]],
) -> bool:
    """Whether a call (its tool name and arguments as JSON text) is the gold plan step ``gold``."""
    if name != gold.get("tool") or name not in models:
        return False
    try:
        arguments = json.loads(arguments_json)
    except (ValueError, RecursionError):
        return False
    if not isinstance(arguments, dict):
        return False
    mine = _identity(models[name], arguments)
    return mine is not None and mine == _identity(models[name], gold.get("arguments") or {})


def first_call_component(
    messages: Sequence[Mapping[str, Any]],
    plan: Sequence[Mapping[str, Any]] | None,
    models: Mapping[str, type[BaseModel]],
) -> float:
    """1.0 when the first tool call in ``messages`` is the first step of ``plan``; else 0.0."""
    if not plan:
        return 0.0
    for message in messages:
        if message.get("role") != "assistant":
            continue
        calls = message.get("tool_calls")
        if calls:
            function = calls[0].get("function") or {}
            return float(
                same_call(
                    str(function.get("name", "")),
                    str(function.get("arguments", "")),
                    plan[0],
                    models,
                )
            )
    return 0.0
