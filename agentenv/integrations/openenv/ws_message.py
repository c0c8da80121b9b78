"""WebSocket messages OpenEnv's ``/ws`` handler cannot read, answered with an error, the session kept.

Why: OpenEnv's handler reads each message as ``json.loads(text).get("type")`` and catches only
text that is not JSON (an ``INVALID_JSON`` error, and the session goes on). A JSON value that is
not an object (``[1, 2]``, ``"x"``, ``5``, ``null``), a binary message, or an array nested past the
recursion limit raised outside its per-message ``try``: the session ended with a
``SESSION_ERROR`` (its env closed), over one malformed message. Those are answered here with an
error of OpenEnv's own shape (``{"type": "error", "data": {"message", "code"}}``) before its
handler sees them, and the session goes on.

Only a message whose text does not start with ``{`` is looked at (:func:`refusal`); the usual
one costs one comparison. An object nested past the recursion limit still reaches OpenEnv's
handler and ends its session: telling it apart would cost a parse of every message.

Example:
    >>> refusal({"type": "websocket.receive", "text": '{"type": "state"}'}) is None
    True
    >>> refusal({"type": "websocket.receive", "text": "hello"}) is None  # OpenEnv's INVALID_JSON
    True
    >>> json.loads(refusal({"type": "websocket.receive", "text": "[1, 2]"}))["data"]["message"]
    'the message is a JSON list, not an object; expected a JSON object with a "type" field (reset, step, state, close or mcp)'
"""

from __future__ import annotations

import json
from typing import Any

EXPECTED = 'expected a JSON object with a "type" field (reset, step, state, close or mcp)'
"""What a message must be, as each refusal says."""


def refusal(message: dict[str, Any]) -> str | None:
    """The error to answer a ``websocket.receive`` ``message`` with, or None to hand it to OpenEnv.

    None for text starting with ``{`` (OpenEnv reads it, or answers it ``INVALID_JSON``) and for
    text that is not JSON (answered ``INVALID_JSON`` by OpenEnv, whose session goes on).
    """
    text = message.get("text")
    if text is not None and text[:1] == "{":
        return None
    if text is None:
        size = len(message.get("bytes") or b"")
        return _error(f"the message is binary ({size} bytes), not text; {EXPECTED}", "INVALID_JSON")
    try:
        value = json.loads(text)
    except RecursionError:
        return _error(
            f"the message is not valid JSON (nested too deeply); {EXPECTED}", "INVALID_JSON"
        )
    except ValueError:
        return None
    if isinstance(value, dict):
        return None
    kind = "null" if value is None else type(value).__name__
    return _error(f"the message is a JSON {kind}, not an object; {EXPECTED}", "VALIDATION_ERROR")


def _error(text: str, code: str) -> str:
    """OpenEnv's ``WSErrorResponse``, as its handler writes it."""
    from openenv.core.env_server.types import WSErrorCode, WSErrorResponse

    return WSErrorResponse(data={"message": text, "code": WSErrorCode(code)}).model_dump_json()
