"""verl-tool's ``POST /get_observation`` body: its parser, against :class:`EnvServerLimits`.

The protocol, as verl-tool's tool server (``verl_tool/servers/tool_server.py``,
``ActionRequest``) and its agent loop's client (``verl_tool/agent_loop``,
``interact_with_tool_server``) speak it:

* request: ``trajectory_ids`` (list of str, at least one), ``actions`` (list of
  str, one per id), and optional lists of the same length ``finish`` (bool: the
  trajectory is over, clean it up), ``is_last_step`` (bool) and
  ``extra_fields`` (one object per id; the agent loop sends the row's
  ``extra_info`` there);
* response: ``observations`` (a str, or an object with ``obs`` and ``reward``),
  ``dones`` and ``valids``, one per id.

A body that breaks this is refused as a whole with one JSON error naming the
field (:class:`~agentenv.retrieval.server_requests.RequestError`), before any
trajectory is touched; what an action *says* is the env's business, never an error here.

Example:
    >>> from agentenv.integrations.serve_env.limits import EnvServerLimits
    >>> items = parse_request(b'{"trajectory_ids": ["a"], "actions": ["<answer>x</answer>"]}', EnvServerLimits())
    >>> items[0]
    Item(trajectory_id='a', action='<answer>x</answer>', finish=False, is_last_step=False, extra_fields={})
    >>> parse_request(b'{"trajectory_ids": ["a"], "actions": []}', EnvServerLimits())
    Traceback (most recent call last):
    ...
    agentenv.retrieval.server_requests.RequestError: 'actions' has 0 items; expected one per trajectory id (1)
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from agentenv.integrations.serve_env.limits import EnvServerLimits
from agentenv.retrieval.server_requests import RequestError, bounded_int, request_kind

EXPECTED = (
    '{"trajectory_ids": [str, ...], "actions": [str, ...], "finish": [bool, ...], '
    '"is_last_step": [bool, ...], "extra_fields": [{...}, ...]}'
)
FIELDS = ("trajectory_ids", "actions", "finish", "is_last_step", "extra_fields")


class Item(NamedTuple):
    """One trajectory's part of a request."""

    trajectory_id: str
    action: str
    finish: bool
    is_last_step: bool
    extra_fields: dict[str, Any]


def parse_request(body: bytes, limits: EnvServerLimits) -> list[Item]:
    """Validate a ``/get_observation`` body; raise RequestError (400/413/422) saying what is expected.

    Unknown top-level fields are ignored, as verl-tool's server does (it folds
    them into ``extra_fields``); the agentenv server reads only the start fields.
    """
    if len(body) > limits.max_body_bytes:
        raise RequestError(413, f"body has {len(body)} bytes; at most {limits.max_body_bytes}")
    payload = _fast_loads(body)
    if payload is _NOT_FAST:
        payload = _loads(body)
    items = _plain_items(payload, limits)
    if items is not None:
        return items
    if not isinstance(payload, dict):
        raise RequestError(
            422, f"body must be a JSON object {EXPECTED}, got {request_kind(payload)}"
        )
    ids = _strings(payload, "trajectory_ids", limits.max_id_chars, limits)
    if not ids:
        raise RequestError(422, "'trajectory_ids' is empty; expected at least one trajectory id")
    if len(set(ids)) != len(ids):
        raise RequestError(
            422, "'trajectory_ids' repeats an id; send one action per trajectory per request"
        )
    # Actions are agent text: one over max_action_chars is that trajectory's error observation
    # (see app.py), not a refusal of the whole batch.
    actions = _strings(payload, "actions", None, limits, expected=len(ids))
    finish = _flags(payload, "finish", len(ids))
    last = _flags(payload, "is_last_step", len(ids))
    extra = payload.get("extra_fields")
    if extra is None:
        extras: list[dict[str, Any]] = [{} for _ in ids]
    else:
        _check_list(extra, "extra_fields", len(ids))
        for i, fields in enumerate(extra):
            if fields is not None and not isinstance(fields, dict):
                raise RequestError(
                    422, f"'extra_fields'[{i}] must be an object, got {request_kind(fields)}"
                )
            if fields and _deeper_than(fields, MAX_FIELDS_DEPTH):
                raise RequestError(
                    422,
                    f"'extra_fields'[{i}] nests deeper than {MAX_FIELDS_DEPTH} levels; a row's "
                    "extra_info is a few levels deep",
                )
        extras = [fields or {} for fields in extra]
    return [Item(*row) for row in zip(ids, actions, finish, last, extras, strict=True)]


def _plain_items(payload: Any, limits: EnvServerLimits) -> list[Item] | None:
    """The items of a body that is plainly valid (the usual one), checked in one pass; else None.

    Why: a request of one trajectory is read several times a second per trajectory, and the
    checks below, one function per field, cost more than reading the JSON. This pass accepts
    only what :func:`parse_request`'s checks accept (lists of exactly typed values, flags as
    JSON booleans, ``extra_fields`` objects with no list or object inside) and gives the same
    items; anything else, valid or not, returns None and goes through those checks, which give
    the items or the error.
    """
    if type(payload) is not dict:
        return None
    ids = payload.get("trajectory_ids")
    actions = payload.get("actions")
    if type(ids) is not list or type(actions) is not list:
        return None
    n = len(ids)
    if n == 1 and len(actions) == 1:
        return _plain_one(payload, ids[0], actions[0], limits)
    if not 0 < n <= limits.max_actions_per_request or len(actions) != n:
        return None
    max_id = limits.max_id_chars
    for tid in ids:
        if type(tid) is not str or len(tid) > max_id or not tid.isascii():
            return None
    for action in actions:
        if type(action) is not str or not (action.isascii() or _encodable(action)):
            return None
    if n > 1 and len(set(ids)) != n:
        return None
    finish = _plain_flags(payload.get("finish"), n)
    last = _plain_flags(payload.get("is_last_step"), n)
    if finish is None or last is None:
        return None
    extra = payload.get("extra_fields")
    if extra is None:
        extras: list[dict[str, Any]] = [{} for _ in ids]
    elif type(extra) is list and len(extra) == n:
        extras = []
        for fields in extra:
            if fields is None:
                extras.append({})
            elif type(fields) is dict:
                for value in fields.values():
                    if type(value) is dict or type(value) is list:
                        return None
                extras.append(fields)
            else:
                return None
    else:
        return None
    make = Item._make
    return [make(row) for row in zip(ids, actions, finish, last, extras, strict=True)]


def _plain_one(
    payload: dict[str, Any], tid: Any, action: Any, limits: EnvServerLimits
) -> list[Item] | None:
    """:func:`_plain_items` for one trajectory (verl-tool's agent loop sends them): the same
    checks written out for one item, without the loops and the lists of flags (half the CPU)."""
    if (
        type(tid) is not str
        or len(tid) > limits.max_id_chars
        or not tid.isascii()
        or limits.max_actions_per_request < 1
        or type(action) is not str
        or not (action.isascii() or _encodable(action))
    ):
        return None
    finish = payload.get("finish")
    if finish is not None:
        if type(finish) is not list or len(finish) != 1 or type(finish[0]) is not bool:
            return None
        finish = finish[0]
    last = payload.get("is_last_step")
    if last is not None:
        if type(last) is not list or len(last) != 1 or type(last[0]) is not bool:
            return None
        last = last[0]
    extra = payload.get("extra_fields")
    fields: Any = None
    if extra is not None:
        if type(extra) is not list or len(extra) != 1:
            return None
        fields = extra[0]
        if type(fields) is dict:
            for value in fields.values():
                if type(value) is dict or type(value) is list:
                    return None
        elif fields is not None:
            return None
    return [Item(tid, action, finish is True, last is True, fields or {})]


def _plain_flags(values: Any, n: int) -> list[bool] | None:
    """A flag list of JSON booleans, or [False] * n for none; else None (the full checks decide)."""
    if values is None:
        return [False] * n
    if type(values) is not list or len(values) != n:
        return None
    for value in values:
        if type(value) is not bool:
            return None
    return values


def _encodable(text: str) -> bool:
    """Whether ``text`` encodes to UTF-8 (no unpaired surrogate escape)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


_NOT_FAST = object()
_DIGITS = bytes.maketrans(b"0123456789", b"9999999999")
_LONG_DIGITS = b"9" * 19
"""Where orjson and the stdlib part: orjson reads an integer past 64 bits as a float. (A digit
run found by ``translate`` and ``in``: a regular expression took 60 µs on a 2 KB body.)"""
_FAST_MAX_OPENINGS = 900
"""Brackets and braces a body may hold for orjson to read it: the stdlib's reader recurses per
level and fails near the interpreter's recursion limit (1,000) where orjson reads on (to 1,024),
so a body that could nest that deep is left to the stdlib, which gives its answer."""

try:
    from orjson import loads as _orjson_loads
except ImportError:  # the stdlib alone: the same values, ~4x the CPU
    _orjson_loads = None


def _fast_loads(body: bytes) -> Any:
    """orjson's reading of ``body`` where it is the stdlib's (and ~4x cheaper), else ``_NOT_FAST``.

    orjson refuses what the stdlib accepts beyond RFC 8259 (NaN, unpaired surrogate escapes,
    UTF-16 bodies, a BOM), reads integers past 64 bits as floats and nests deeper than the
    stdlib can; such a body (a run of 19 digits, or more than 900 brackets, anywhere in it), and
    any body orjson refuses, is read by :func:`_loads`, so values and errors are the stdlib's.

    Example:
        >>> _fast_loads(b'{"seed": 3}'), _fast_loads(b'[NaN]') is _NOT_FAST
        ({'seed': 3}, True)
        >>> _fast_loads(b'[18446744073709551616]') is _NOT_FAST
        True
    """
    if (
        _orjson_loads is None
        or (  # a shorter body cannot hold that many
            len(body) > _FAST_MAX_OPENINGS
            and body.count(b"[") + body.count(b"{") > _FAST_MAX_OPENINGS
        )
        or _LONG_DIGITS in body.translate(_DIGITS)
    ):
        return _NOT_FAST
    try:
        return _orjson_loads(body)
    except ValueError:  # orjson.JSONDecodeError: the stdlib says why
        return _NOT_FAST


def _loads(body: bytes) -> Any:
    """The stdlib's reading of ``body``, with the protocol's error for each way it fails."""
    try:
        return json.loads(body, parse_int=bounded_int)
    except RecursionError:
        raise RequestError(400, f"the body nests too deeply; expected {EXPECTED}") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise RequestError(
            400,
            f"body is not valid UTF-8 JSON ({' '.join(str(exc).split())[:120]}); "
            f"expected {EXPECTED}",
        ) from None


MAX_FIELDS_DEPTH = 32
"""Levels of lists and objects one ``extra_fields`` object may nest (itself the first). A row's
``extra_info`` is a few levels deep; the bound keeps what a server passes between its processes
(``--workers``) far from any recursion limit."""


def _deeper_than(value: object, limit: int) -> bool:
    """Whether ``value`` nests more than ``limit`` levels of lists and objects (iterative: no recursion).

    Example:
        >>> _deeper_than({"a": [{"b": 1}]}, 3), _deeper_than({"a": [{"b": 1}]}, 2)
        (False, True)
    """
    if isinstance(value, dict) and limit >= 1:  # the usual row: one flat object
        for item in value.values():
            if isinstance(item, (dict, list)):
                break
        else:
            return False
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item if isinstance(v, (dict, list)))
    return False


def _check_list(value: object, name: str, expected: int | None) -> None:
    if not isinstance(value, list):
        raise RequestError(
            422, f"'{name}' must be a list, got {request_kind(value)}; expected {EXPECTED}"
        )
    if expected is not None and len(value) != expected:
        raise RequestError(
            422, f"'{name}' has {len(value)} items; expected one per trajectory id ({expected})"
        )


def _strings(
    payload: dict[str, Any],
    name: str,
    max_chars: int | None,
    limits: EnvServerLimits,
    expected: int | None = None,
) -> list[str]:
    if name not in payload:
        raise RequestError(422, f"missing field '{name}'; expected {EXPECTED}")
    values = payload[name]
    _check_list(values, name, expected)
    if len(values) > limits.max_actions_per_request:
        raise RequestError(
            422,
            f"'{name}' has {len(values)} items; at most "
            f"{limits.max_actions_per_request} per request (split the batch)",
        )
    for i, value in enumerate(values):
        if not isinstance(value, str):
            raise RequestError(422, f"'{name}'[{i}] must be a string, got {request_kind(value)}")
        if max_chars is not None and len(value) > max_chars:
            raise RequestError(
                422, f"'{name}'[{i}] has {len(value)} characters; at most {max_chars}"
            )
        if not value.isascii():
            try:
                value.encode()
            except UnicodeEncodeError:
                raise RequestError(
                    422,
                    f"'{name}'[{i}] is not valid Unicode text (it holds an unpaired "
                    "surrogate escape)",
                ) from None
    return values


def _flags(payload: dict[str, Any], name: str, expected: int) -> list[bool]:
    values = payload.get(name)
    if values is None:
        return [False] * expected
    _check_list(values, name, expected)
    for i, value in enumerate(values):
        # verl-tool's own client sends Python bools, and ints (0/1) in its error paths.
        if not (isinstance(value, bool) or (isinstance(value, int) and value in (0, 1))):
            raise RequestError(
                422, f"'{name}'[{i}] must be true or false, got {request_kind(value)}"
            )
    return [bool(value) for value in values]
