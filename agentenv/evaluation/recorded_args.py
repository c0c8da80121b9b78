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

__all__ = [
    "KEY_KINDS",
    "REDACTED",
    "SECRET_LAST_WORDS",
    "SECRET_WORDS",
    "TOKEN_KINDS",
    "is_secret_arg",
    "recorded_arg",
    "without_credentials",
]

REDACTED = "<redacted>"
"""What ``run.json`` and ``summary.json`` hold in place of a secret argument's value."""
SECRET_WORDS = frozenset(
    {
        "secret",
        "secrets",
        "password",
        "passwords",
        "passwd",
        "passphrase",
        "pwd",
        "credential",
        "credentials",
        "creds",
        "cookie",
        "cookies",
        "authorization",
        "bearer",
        "jwt",
        "apikey",
        "apikeys",
        "secretkey",
        "privatekey",
        "accesskey",
    }
)
"""Words that make an ``--agent-args`` name a secret wherever they stand (:func:`is_secret_arg`)."""
SECRET_LAST_WORDS = frozenset({"auth", "pat"})
"""Words that make a name a secret as its last word (``basic_auth``, ``github_pat``; not ``auth_mode``)."""
KEY_KINDS = frozenset(
    {"api", "secret", "private", "access", "client", "signing", "encryption", "license", "master"}
    | {"auth", "subscription", "service", "openai", "anthropic", "hf"}
)
"""Words before a last ``key``/``keys`` that make the name a secret (``api_key``; not ``sort_key``)."""
TOKEN_KINDS = frozenset(
    {"hf", "huggingface", "access", "auth", "api", "bearer", "refresh", "session", "id"}
    | {"github", "gh", "gitlab", "openai", "wandb", "secret", "private", "personal", "user"}
    | {"client", "oauth", "csrf", "security", "bot", "service"}
)
"""Words before a last ``token`` that make the name a secret (``hf_token``; not ``eos_token``, a
tokenizer's special token, which changes scores)."""


_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def is_secret_arg(name: str) -> bool:
    """Whether an ``--agent-args`` name holds a secret, by its whole words (``snake_case``,
    ``kebab-case``, ``camelCase``): a word of :data:`SECRET_WORDS` anywhere (``client_secret``,
    ``password``); ``auth`` or ``pat`` last (``basic_auth``, ``github_pat``); ``key`` or ``keys``
    alone or after a word of :data:`KEY_KINDS` (``api_key``, ``x-api-key``, ``private_key``);
    ``token`` alone or after a word of :data:`TOKEN_KINDS` (``hf_token``, ``access_token``,
    ``authToken``), or one word ending in ``token`` (``accesstoken``).
    A name that merely holds such a word (``max_tokens``, ``eos_token``, ``sort_key``,
    ``auth_mode``, ``keyword``) is not a secret: such an argument can change scores and stays on
    the board and in ``run.json``.

    Example:
        >>> names = ("api_key", "apiKey", "hf_token", "max_tokens", "eos_token", "sort_key", "basic_auth")
        >>> [k for k in names if is_secret_arg(k)]
        ['api_key', 'apiKey', 'hf_token', 'basic_auth']
    """
    words = [w.lower() for w in _WORDS.findall(name)]
    if not words:
        return False
    last, before = words[-1], words[-2] if len(words) > 1 else None
    if any(w in SECRET_WORDS for w in words) or last in SECRET_LAST_WORDS:
        return True
    if last in ("key", "keys"):
        return before is None or before in KEY_KINDS
    if last == "token":
        return before is None or before in TOKEN_KINDS
    return last.endswith("token") and last != "token"


_URL_USERINFO = re.compile(r"((?:[A-Za-z][A-Za-z0-9+.\-]*:)?//)[^/?#\s]*@")
"""The user information of a URL, with a scheme (``http://u:p@h``) or without (``//u:p@h``)."""
_BARE_USERINFO = re.compile(r"[^\s/@:]+:[^\s/@]*@(?=[A-Za-z0-9.\-]+(?::[0-9]+)?(?:/\S*)?$)")
"""``user:password@host[:port][/path]`` with no ``//`` at all, as a whole value (not a model's
``name:tag@sha256:digest``)."""
_URL_QUERY_PAIR = re.compile(r"([?&;#])([^=&;#]*)=([^&;#]*)")
"""A ``name=value`` pair of a URL's query or fragment (``#access_token=`` in an OAuth redirect)."""
URL_SECRET_PARAMS = frozenset({"sig", "signature", "code"})
"""Last words of a query parameter's name that hold a credential in a URL (a presigned URL's
``X-Amz-Signature``, an SAS ``sig``, an OAuth ``code``), beside :func:`is_secret_arg`'s."""


def without_credentials(value: str) -> str:
    """``value`` without the credentials of any URL in it: the user information before the host
    (``http://alice:hunter2@host`` -> ``http://host``, up to the authority's last ``@``; ``//u:p@h``
    and a whole value ``u:p@host`` too) is cut out, and the value of a query or fragment parameter
    with a secret's name (``?api_key=...``, ``#access_token=...``, ``&X-Amz-Signature=...``) reads
    ``redacted``.

    Example:
        >>> without_credentials("https://u:p@w@host:1/v1?api_key=sk-1&max_tokens=5")
        'https://host:1/v1?api_key=redacted&max_tokens=5'
        >>> without_credentials("alice:pw@10.0.0.1:8000"), without_credentials("a@b.c")
        ('10.0.0.1:8000', 'a@b.c')
        >>> without_credentials("llama3:8b@sha256:4f2a")
        'llama3:8b@sha256:4f2a'
    """
    if "://" not in value and "//" not in value:
        return _BARE_USERINFO.sub("", value, count=1) if "@" in value else value
    value = _URL_USERINFO.sub(r"\1", value)
    return _URL_QUERY_PAIR.sub(
        lambda m: f"{m[1]}{m[2]}=redacted" if _secret_param(m[2]) else m[0], value
    )


def _secret_param(name: str) -> bool:
    words = [w.lower() for w in _WORDS.findall(name)]
    return is_secret_arg(name) or bool(words) and words[-1] in URL_SECRET_PARAMS


def recorded_arg(key: str, value: Any) -> Any:
    """``value`` as a run records it: :data:`REDACTED` for a secret's key (:func:`is_secret_arg`),
    a string without URL credentials (:func:`without_credentials`), anything else unchanged."""
    if is_secret_arg(key):
        return REDACTED
    return without_credentials(value) if isinstance(value, str) else value
