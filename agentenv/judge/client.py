"""A minimal client for OpenAI-compatible chat-completions endpoints, on the standard library.

Why the standard library: the judge is optional, and a reward module should
not pull in an HTTP stack. Why so strict: a judge that fails must say so. A
timeout, a refused connection, or HTTP 429/5xx is retried at most
:data:`MAX_RETRIES` times with exponential backoff, each wait at most
:data:`MAX_BACKOFF_S` (an uncapped doubling waited 127 s per request at 8
retries, and hours beyond); after that, or on any other HTTP error or a
malformed response, :class:`JudgeEndpointError` is raised with the URL, the
model, the attempt count and what came back. Nothing is ever turned into a
score of 0.

Example:
    >>> ChatClient("http://127.0.0.1:8000/v1/", model="qwen").url
    'http://127.0.0.1:8000/v1/chat/completions'
    >>> [backoff_wait(0.5, attempt) for attempt in (1, 2, 3, 8, 10)]
    [0.5, 1.0, 2.0, 30.0, 30.0]
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
MAX_RETRIES = 10
"""Most extra attempts per request: beyond it a judge is down, not busy, and retrying only hides it."""
MAX_BACKOFF_S = 30.0
"""Longest single wait between attempts (a request's own timeout is apart from it)."""


def backoff_wait(backoff_s: float, attempt: int) -> float:
    """Seconds to wait before ``attempt`` (1 = the first retry): ``backoff_s`` doubled each time, at
    most :data:`MAX_BACKOFF_S`, so no retry count can make one wait run for minutes.

    The exponent is cut before it is raised: ``2 ** 10**18`` would never finish computing.
    """
    if attempt < 1 or backoff_s <= 0:
        return 0.0
    return min(backoff_s * 2.0 ** min(attempt - 1, 64), MAX_BACKOFF_S)


class JudgeEndpointError(RuntimeError):
    """The judge endpoint failed, after any retries; the message says where and how."""


@dataclass
class ChatClient:
    """POSTs to ``{base_url}/v1/chat/completions`` and returns the reply text.

    ``retries`` is the number of extra attempts after the first (0 to :data:`MAX_RETRIES`);
    ``backoff_s`` doubles after each, up to :data:`MAX_BACKOFF_S` (:func:`backoff_wait`).
    ``temperature`` is 0 so that a verdict is as repeatable as the endpoint allows.
    """

    base_url: str
    model: str
    timeout_s: float = 30.0
    retries: int = 2
    backoff_s: float = 0.5
    max_tokens: int = 16
    api_key: str | None = field(default=None, repr=False)
    requests: int = field(default=0, init=False)
    """HTTP requests sent so far (attempts included)."""
    _lock: threading.Lock = field(
        default_factory=threading.Lock, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"endpoint must be an http:// or https:// URL, got {self.base_url!r}")
        # written as `not x > 0` so that NaN, which passes every `<=` test, is refused too
        if not (self.timeout_s > 0 and self.backoff_s >= 0 and self.max_tokens >= 1):
            raise ValueError("timeout_s and max_tokens must be positive; backoff_s >= 0")
        if not 0 <= self.retries <= MAX_RETRIES:
            raise ValueError(f"retries must be from 0 to {MAX_RETRIES}, got {self.retries}")

    @property
    def url(self) -> str:
        """The chat-completions URL; a base URL that already ends in ``/v1`` is accepted."""
        base = self.base_url.rstrip("/").removesuffix("/v1")
        return f"{base}/v1/chat/completions"

    def complete(self, messages: Sequence[Mapping[str, str]], *, context: str = "") -> str:
        """The assistant's reply to ``messages``; ``context`` is added to any error."""
        body = json.dumps(
            {
                "model": self.model,
                "messages": list(messages),
                "temperature": 0,
                "max_tokens": self.max_tokens,
            }
        ).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        where = (
            f"judge endpoint {self.url} (model {self.model!r}{', ' + context if context else ''})"
        )
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(backoff_wait(self.backoff_s, attempt))
            with self._lock:
                self.requests += 1
            request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    payload = response.read()
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code}: {_excerpt(exc.read())}"
                if exc.code not in RETRY_STATUSES:
                    raise JudgeEndpointError(f"{where} failed: {last}") from None
                continue
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                reason = getattr(exc, "reason", exc)
                last = (
                    f"{type(reason).__name__}: {reason}" if str(reason) else type(reason).__name__
                )
                continue
            return _reply_text(payload, where)
        raise JudgeEndpointError(
            f"{where} failed after {self.retries + 1} attempts; last error: {last}"
        )


def _reply_text(payload: bytes, where: str) -> str:
    try:
        data: Any = json.loads(payload)
        content = data["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise JudgeEndpointError(
            f"{where} returned a response without choices[0].message.content: {_excerpt(payload)}"
        ) from None
    if not isinstance(content, str):
        raise JudgeEndpointError(f"{where} returned non-text content: {_excerpt(payload)}")
    return content


def _excerpt(raw: bytes, limit: int = 300) -> str:
    text = raw.decode("utf-8", errors="replace").strip()
    return repr(text if len(text) <= limit else text[:limit] + "...")
