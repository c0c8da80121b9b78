"""One bounded JSON POST for the llm agent: a deadline over the whole exchange, a size cap, typed failures.

Why a module of its own: the chat endpoint (text evaluation) and the
completions endpoint (token-exact rollouts, :mod:`agentenv.baselines.llm_tokens`)
share the same transport and the same retry policy, and neither needs the
other's request format.

Requests go out with the stdlib ``http.client`` (no proxy settings are read,
which keeps loopback servers reachable). :func:`post_json` raises
:class:`Retryable` for what another attempt may fix (connection errors,
timeouts, HTTP 408, 409, 425, 429 and 5xx, unreadable replies) and
:class:`~agentenv.evaluation.agents.AgentFailure` for the rest (other 4xx).

Example:
    >>> endpoint_url("http://127.0.0.1:8000", "chat/completions"), endpoint_url("https://host/v1/", "completions")
    ('http://127.0.0.1:8000/v1/chat/completions', 'https://host/v1/completions')
"""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from agentenv.evaluation.agents import AgentFailure
from agentenv.evaluation.recorded_args import without_credentials
from agentenv.terminal_text import code_points

RETRY_STATUSES = frozenset({408, 409, 425, 429}) | frozenset(range(500, 600))
"""HTTP statuses worth another try; any other error status is the caller's mistake."""
MAX_BACKOFF_S = 8.0
"""Upper bound of one wait between retries."""
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
"""A reply larger than this is refused (a misbehaving server must not exhaust memory)."""


class Retryable(Exception):
    """A failed attempt that another attempt may fix."""


class HTTPError(AgentFailure):
    """A non-retried error status; ``status`` and ``excerpt`` (the start of the body) say what came back."""

    def __init__(self, url: str, status: int, excerpt: str) -> None:
        super().__init__(f"{url}: HTTP {status} (not retried): {excerpt}")
        self.status = status
        self.excerpt = excerpt


def endpoint_url(base_url: str, endpoint: str) -> str:
    """``{root}/v1/{endpoint}`` for a server root or a ``/v1`` base URL."""
    root = base_url.rstrip("/")
    return f"{root}/{endpoint}" if root.endswith("/v1") else f"{root}/v1/{endpoint}"


def post_json(url: str, payload: bytes, *, timeout_s: float, api_key: str | None = None) -> Any:
    """One POST with a deadline over the whole exchange; the decoded JSON reply.

    Raises:
        Retryable: a failure another attempt may fix.
        HTTPError: an error status that is not retried (the caller's request is wrong).
    """
    return request_json("POST", url, payload, timeout_s=timeout_s, api_key=api_key)


def get_json(url: str, *, timeout_s: float, api_key: str | None = None) -> Any:
    """One GET (e.g. ``/v1/models``), bounded and typed like :func:`post_json`."""
    return request_json("GET", url, None, timeout_s=timeout_s, api_key=api_key)


def request_json(
    method: str, url: str, payload: bytes | None, *, timeout_s: float, api_key: str | None = None
) -> Any:
    """One request with a deadline over the whole exchange; the decoded JSON reply (see :func:`post_json`)."""
    parts = urlsplit(url)
    deadline = time.monotonic() + timeout_s
    connection_type = (
        http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    )
    conn = connection_type(parts.hostname or "127.0.0.1", parts.port, timeout=timeout_s)
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    try:
        conn.request(method, path, body=payload, headers=headers)
        _tighten(conn, deadline)
        response = conn.getresponse()
        data = _read_body(conn, response, deadline)
    except TimeoutError:
        raise Retryable(f"no complete reply within {timeout_s:g} s") from None
    except (OSError, http.client.HTTPException) as exc:
        # http.client quotes what the server sent (a bad status line): shown, not obeyed
        raise Retryable(f"connection failed ({type(exc).__name__}: {code_points(exc)})") from None
    finally:
        conn.close()
    if response.status != 200:
        excerpt = body_excerpt(data)
        if response.status in RETRY_STATUSES:
            raise Retryable(f"HTTP {response.status}: {excerpt}")
        raise HTTPError(without_credentials(url), response.status, excerpt)
    try:
        return json.loads(data)
    except ValueError:
        raise Retryable(f"the reply is not JSON: {data[:120]!r}") from None


def with_retries(
    attempt: Callable[[], Any],
    *,
    retries: int,
    backoff_s: float,
    url: str,
    on_retry: Callable[[int, str], None],
) -> Any:
    """``attempt()`` at most ``retries + 1`` times with capped exponential backoff.

    ``attempt`` raises :class:`Retryable` (or ``KeyError``/``IndexError``/``TypeError`` for a reply
    of the wrong shape) to ask for another try; :class:`AgentFailure` ends at once.

    Raises:
        AgentFailure: every attempt failed (the last reason is in the message).
    """
    errors: list[str] = []
    for n in range(retries + 1):
        if n:
            time.sleep(min(backoff_s * 2 ** (n - 1), MAX_BACKOFF_S))
        try:
            return attempt()
        except Retryable as exc:
            errors.append(str(exc))
        except (KeyError, IndexError, TypeError) as exc:
            errors.append(f"reply without the expected fields ({type(exc).__name__}: {exc})")
        on_retry(n, errors[-1])
    raise AgentFailure(f"{url}: {len(errors)} attempt(s) failed; last: {errors[-1]}")


EXCERPT_BYTES = 300
"""The start of an error body a failure reason quotes."""


def body_excerpt(data: bytes) -> str:
    """The start of a server's error body for a failure reason: cut to :data:`EXCERPT_BYTES`, decoded
    leniently, on one line (runs of whitespace, line breaks and ``\\r`` included, are one space),
    every other control character written as ``<U+XXXX>`` (:func:`~agentenv.terminal_text.code_points`).

    Why here: the reason is logged at each retry, kept in ``summary.json``, printed by ``agentenv
    eval`` (``failed run:``, ``stopped:``) and quoted by the leaderboard's refusal; a body such as
    ``overloaded ESC]0;OWNED BEL ESC[2K CR all good ESC[8m`` would set the window title, erase the
    line and hide the rest of the message on each of them. Marked rather than escaped with
    backslashes, so that the lines that print the reason through
    :func:`~agentenv.terminal_text.terminal_text` escape nothing twice.

    Example:
        >>> body_excerpt(b"overloaded \\x1b]0;OWNED\\x07\\x1b[2K\\rall good\\x1b[8m\\n")
        'overloaded <U+001B>]0;OWNED<U+0007><U+001B>[2K all good<U+001B>[8m'
    """
    text = data[:EXCERPT_BYTES].decode("utf-8", errors="replace")
    return code_points(" ".join(text.split()))


def _tighten(conn: http.client.HTTPConnection, deadline: float) -> None:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError
    if conn.sock is not None:
        conn.sock.settimeout(remaining)


def _read_body(
    conn: http.client.HTTPConnection, response: http.client.HTTPResponse, deadline: float
) -> bytes:
    """Read the body in chunks, each under what is left of the deadline (a trickling server times out too)."""
    chunks, size = [], 0
    while True:
        _tighten(conn, deadline)
        chunk = response.read1(65536) if hasattr(response, "read1") else response.read(65536)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            raise http.client.HTTPException(f"reply larger than {MAX_RESPONSE_BYTES} bytes")
        chunks.append(chunk)
