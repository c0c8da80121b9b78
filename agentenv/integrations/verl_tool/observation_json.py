"""The JSON a verl-tool answer is made of: one step's observation, written piece by piece, and error bodies.

Why a module of its own: :mod:`.app` decides what a request does (phases, turns, limits); this
module only writes bytes, the same bytes ``json.dumps`` would, by a cheaper path on the hot one
(tests/integrations/test_verl_tool_answer_bytes.py searches for an observation where they differ).
"""

from __future__ import annotations

import json
from typing import Any

from agentenv.integrations.serve_env.limits import EnvServerLimits
from agentenv.integrations.serve_env.sessions import Outcome

Headers = list[tuple[bytes, bytes]]


def observation(outcome: Outcome, *, messages: bool = False) -> dict[str, Any]:
    """The observation object of one step (see the module docstring)."""
    obs: dict[str, Any] = {"obs": outcome.observation, "reward": outcome.reward}
    if outcome.done:
        obs.update(
            terminated=outcome.terminated,
            truncated=outcome.truncated,
            turns=outcome.turns,
            total_reward=outcome.total_reward,
            reward_components=dict(outcome.info.get("reward_components") or {}),
        )
        if messages:
            obs["messages"] = outcome.info.get("messages", [])
    return obs


def observation_json(outcome: Outcome, *, messages: bool = False) -> bytes:
    """``encode_observation(observation(outcome, messages=messages)).encode()``, written piece by piece.

    Why: the object and a ``json`` encoder built per call cost more than the text's own escaping
    (a 600-character search result: 4.1 µs against 1.8). The pieces are those ``json`` writes:
    the text escaped to ASCII, floats as ``repr`` (``NaN``, ``Infinity`` where not finite), ints
    and bools as ``json`` writes them; the reward components (and messages) go through
    :data:`encode_observation` itself. An observation that is not text takes that path whole.

    Example:
        >>> from agentenv.integrations.serve_env.sessions import Outcome
        >>> step = Outcome('{"a": "é"}', 0.5, False, False, True, {}, 1, 0.5)
        >>> observation_json(step) == encode_observation(observation(step)).encode()
        True
    """
    text = outcome.observation
    if type(text) is not str:
        return encode_observation(observation(outcome, messages=messages)).encode()
    head = b'{"obs": ' + json_text(text) + b', "reward": ' + json_float(outcome.reward)
    if not (outcome.terminated or outcome.truncated):
        return head + b"}"
    parts = [
        head,
        b', "terminated": ',
        _JSON_BOOLS[outcome.terminated is True] if type(outcome.terminated) is bool else None,
        b', "truncated": ',
        _JSON_BOOLS[outcome.truncated is True] if type(outcome.truncated) is bool else None,
        b', "turns": ',
        str(outcome.turns).encode() if type(outcome.turns) is int else None,
        b', "total_reward": ',
        json_float(outcome.total_reward),
        b', "reward_components": ',
        encode_observation(dict(outcome.info.get("reward_components") or {})).encode(),
    ]
    if None in parts:  # counters of another type than the Outcome declares: json's own writing
        return encode_observation(observation(outcome, messages=messages)).encode()
    if messages:
        parts += (b', "messages": ', encode_observation(outcome.info.get("messages", [])).encode())
    parts.append(b"}")
    return b"".join(parts)


_JSON_BOOLS = (b"false", b"true")
_INFINITY = float("inf")

try:
    from orjson import dumps as _orjson_dumps
except ImportError:  # the stdlib alone: the same bytes, ~2x the CPU
    _orjson_dumps = None


def json_text(text: str) -> bytes:
    """``json.dumps(text).encode()`` (ASCII, as ``json`` escapes it), by orjson where that is the same.

    orjson writes ASCII text as ``json`` does except DEL (``json`` escapes it as ``\\u007f``);
    other text (non-ASCII, which orjson would write as UTF-8) goes to ``json``'s own escaping.

    Example:
        >>> [json_text(t) == json.dumps(t).encode() for t in ('a"b', chr(127), "é", chr(0xD800))]
        [True, True, True, True]
    """
    if _orjson_dumps is not None and text.isascii() and "\x7f" not in text:
        return _orjson_dumps(text)
    return _encode_text(text).encode()


def json_float(value: float) -> bytes:
    """``json.dumps(value).encode()`` for a float (``repr``; ``NaN``, ``Infinity``, ``-Infinity``).

    Example:
        >>> [json_float(x) for x in (0.0, -1e16, float("nan"), float("-inf"))]
        [b'0.0', b'-1e+16', b'NaN', b'-Infinity']
    """
    if type(value) is not float:
        return encode_observation(value).encode()
    if value != value:
        return b"NaN"
    if value == _INFINITY:
        return b"Infinity"
    if value == -_INFINITY:
        return b"-Infinity"
    return float.__repr__(value).encode()


def plain_value(value: Any) -> Any:
    """JSON for values ``json`` does not know (numpy scalars, tuples of them): their Python value, else text."""
    item = getattr(value, "item", None)
    if callable(item):
        return item()
    return str(value)


encode_observation = json.JSONEncoder(default=plain_value).encode
"""``json.dumps(obs, default=plain_value)``, with the encoder built once rather than per call."""

_encode_text = json.encoder.encode_basestring_ascii
"""``json``'s escaping of text to ASCII (in C), as ``json.dumps`` applies it."""


def error_body(reason: str) -> bytes:
    return json.dumps({"error": reason}).encode()


def refused_answer(limits: EnvServerLimits) -> tuple[int, bytes, Headers]:
    """The 503 answer at ``max_live_envs``, with ``Retry-After``."""
    wait = str(limits.retry_after_s)
    reason = (
        f"server at its limit of {limits.max_live_envs} live trajectories; "
        f"retry after {wait} s (or finish trajectories)"
    )
    return 503, error_body(reason), [(b"retry-after", wait.encode())]
