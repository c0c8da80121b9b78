"""What a run records and a board shows of an agent argument: secrets left out, by name and inside a URL.

Why one module: ``run.json`` and ``summary.json`` are shared, and the leaderboard shows the
arguments in each row's label. A key named as a secret was redacted on disk by one rule and
hidden from labels by another, and a password written into an endpoint's URL
(``base_url=http://alice:hunter2@host/v1``) was recorded and published as given. Now the files take
their copy from :func:`recorded_arg` and the labels use the same two rules (:func:`is_secret_arg`,
:func:`without_credentials`), so the summary and ``run.json`` still agree (the board compares them)
and ``--resume`` compares like with like.

Example:
    >>> recorded_arg("api_key", "sk-123"), recorded_arg("hf_token", "hf_x")
    ('<redacted>', '<redacted>')
    >>> recorded_arg("base_url", "http://alice:hunter2@127.0.0.1:8000/v1")
    'http://127.0.0.1:8000/v1'
    >>> recorded_arg("max_tokens", "16"), recorded_arg("k", 5)
    ('16', 5)
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["REDACTED", "SECRET_WORDS", "is_secret_arg", "recorded_arg", "without_credentials"]

REDACTED = "<redacted>"
"""What ``run.json`` and ``summary.json`` hold in place of a secret argument's value."""
SECRET_WORDS = frozenset(
    {
        "key",
        "apikey",
        "secret",
        "secrets",
        "password",
        "passwd",
        "passphrase",
        "pwd",
        "credential",
        "credentials",
        "auth",
        "authorization",
        "bearer",
        "cookie",
    }
)
"""Words of an ``--agent-args`` name that make it a secret (:func:`is_secret_arg`)."""


_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def is_secret_arg(name: str) -> bool:
    """Whether an ``--agent-args`` name holds a secret, by its whole words (``snake_case``,
    ``kebab-case``, ``camelCase``): a word of :data:`SECRET_WORDS` (``api_key``, ``client_secret``,
    ``password``, ``auth``), or a last word ending in ``token`` (``token``, ``hf_token``,
    ``access_token``, ``authToken``, ``accesstoken``).
    A word merely containing one (``max_tokens``, ``return_token_ids``, ``keyword``) is not a
    secret: such an argument changes scores and stays on the board.

    Example:
        >>> [k for k in ("api_key", "apiKey", "hf_token", "max_tokens", "token_budget") if is_secret_arg(k)]
        ['api_key', 'apiKey', 'hf_token']
    """
    words = [w.lower() for w in _WORDS.findall(name)]
    return bool(words) and (words[-1].endswith("token") or any(w in SECRET_WORDS for w in words))


_URL_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://)[^/?#]*@")
_URL_QUERY_PAIR = re.compile(r"([?&;])([^=&;#]*)=([^&;#]*)")


def without_credentials(value: str) -> str:
    """``value`` without the credentials of any URL in it: the user information before the host
    (``http://alice:hunter2@host`` -> ``http://host``, up to the authority's last ``@``) is cut
    out, and the value of a query parameter with a secret's name (``?api_key=...``) reads
    ``redacted``.

    Example:
        >>> without_credentials("https://u:p@w@host:1/v1?api_key=sk-1&max_tokens=5")
        'https://host:1/v1?api_key=redacted&max_tokens=5'
    """
    if "://" not in value:
        return value
    value = _URL_USERINFO.sub(r"\1", value)
    return _URL_QUERY_PAIR.sub(
        lambda m: f"{m[1]}{m[2]}=redacted" if is_secret_arg(m[2]) else m[0], value
    )


def recorded_arg(key: str, value: Any) -> Any:
    """``value`` as a run records it: :data:`REDACTED` for a secret's key (:func:`is_secret_arg`),
    a string without URL credentials (:func:`without_credentials`), anything else unchanged."""
    if is_secret_arg(key):
        return REDACTED
    return without_credentials(value) if isinstance(value, str) else value
