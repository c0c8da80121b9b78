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
    try:
        payload = json.loads(body, parse_int=bounded_int)
    except RecursionError:
        raise RequestError(400, f"the body nests too deeply; expected {EXPECTED}") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise RequestError(
            400,
            f"body is not valid UTF-8 JSON ({' '.join(str(exc).split())[:120]}); "
            f"expected {EXPECTED}",
        ) from None
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
