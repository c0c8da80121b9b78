"""The grammar of an OpenEnv ``POST /reset`` body, checked before OpenEnv's own model reads it.

Why: OpenEnv's ``ResetRequest`` allows any extra field and coerces what it types
(``"0"`` and ``true`` become seed 0 and 1), and some bodies never reached
:meth:`~agentenv.integrations.openenv.environment.AgentEnvEnvironment.reset` to
be refused there: ``{"seed": NaN}`` made a 422 that could not be written (a
500), a key ``"self"`` collided with the method's own argument (a 500), a lone
surrogate in a key failed to encode (a 500). A body is accepted only if it is
empty or a JSON object whose every key is a field ``reset`` reads, each value
of that field's type; anything else is a 422 naming the field and what it takes.

Example:
    >>> reset_body_error(b'{"seed": 3, "index": 7, "split": "test"}') is None
    True
    >>> reset_body_error(b'{"seed": "3"}')
    "'seed' must be a non-negative integer or null, got str '3'"
    >>> reset_body_error(b'{"self": 1}')
    "unknown reset field 'self'; reset takes seed, episode_id, index, task_id, split, or the fields of an agentenv prepare-verl row (env_id, split, task_index, task_id, seed, episode, env_kwargs)"
"""

from __future__ import annotations

import json
from typing import Any

from agentenv.engine.parsing import surrogate_at
from agentenv.integrations.row_episodes import FIELDS as ROW_FIELDS
from agentenv.integrations.row_episodes import describe_value

NATURAL = ("seed", "index", "task_index", "episode")
"""Fields that take a non-negative integer (or null)."""
TEXT = ("episode_id", "task_id", "split", "env_id")
"""Fields that take a string (or null); their content is checked where they are read."""
NAMED = ("seed", "episode_id", "index", "task_id", "split")
"""``reset``'s own parameters; the rest of the allowed fields are a ``prepare-verl`` row's."""
ALLOWED = frozenset(NAMED) | frozenset(ROW_FIELDS)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _has_lone_surrogate(value: Any, depth: int = 0) -> bool:
    if isinstance(value, str):
        return surrogate_at(value) >= 0
    if depth > 32:
        return False  # deeper values are refused by the field checks (only env_kwargs nests)
    if isinstance(value, dict):
        return any(
            _has_lone_surrogate(k, depth + 1) or _has_lone_surrogate(v, depth + 1)
            for k, v in value.items()
        )
    if isinstance(value, list):
        return any(_has_lone_surrogate(v, depth + 1) for v in value)
    return False


def reset_body_error(body: bytes) -> str | None:
    """Why ``body`` is not a reset request (None when it is one; an empty body is one)."""
    if not body.strip():
        return None
    try:
        data = json.loads(body, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as err:
        reason = "nested too deeply" if isinstance(err, RecursionError) else str(err)
        return (
            f"the body is not valid JSON ({' '.join(reason.split())[:120]}); expected a JSON object"
        )
    if not isinstance(data, dict):
        return f"the body is a JSON {type(data).__name__}, not an object of reset fields"
    if _has_lone_surrogate(data):
        return "the body holds a lone UTF-16 surrogate escape (\\ud800-\\udfff), which is no text"
    unknown = sorted(set(data).difference(ALLOWED))
    if unknown:
        more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
        return (
            f"unknown reset field {unknown[0][:40]!r}{more}; reset takes {', '.join(NAMED)}, or the "
            f"fields of an agentenv prepare-verl row ({', '.join(ROW_FIELDS)})"
        )
    for name in NATURAL:
        value = data.get(name)
        if value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**63
        ):
            return f"{name!r} must be a non-negative integer or null, got {describe_value(value)}"
    for name in TEXT:
        value = data.get(name)
        if value is not None and not isinstance(value, str):
            return f"{name!r} must be a string or null, got {describe_value(value)}"
    kwargs = data.get("env_kwargs")
    if kwargs is not None and not isinstance(kwargs, (str, dict)):
        return f"'env_kwargs' must be a JSON object (or its text) or null, got {describe_value(kwargs)}"
    return None
