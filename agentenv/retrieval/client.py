"""A ``Retriever`` that asks a shared retrieval server over HTTP.

Env workers hold this client instead of an index: it is a few fields, so it
pickles into forked or spawned worker processes, and each process (and
thread) opens its own keep-alive connection on first use. It uses only the
standard library, so workers need no extra to talk to a server.

Failure is bounded: connection errors and 503s are retried ``retries`` times
with exponential backoff (honouring ``Retry-After`` up to a cap), then
``RetrievalUnavailable`` is raised; a timeout is raised at once, since a
server that is hung or saturated does not get better by being asked again.
A 4xx is the caller's bug and raises ``RetrievalRequestError`` at once.

Example:
    >>> client = RetrievalClient("http://127.0.0.1:8700", retries=1)
    >>> client
    RetrievalClient('http://127.0.0.1:8700', timeout_s=5.0, retries=1, backoff_s=0.05)
    >>> import pickle
    >>> pickle.loads(pickle.dumps(client)).url
    'http://127.0.0.1:8700'
"""

from __future__ import annotations

import http.client
import json
import os
import threading
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from agentenv.retrieval.base import Hit


class RetrievalError(RuntimeError):
    """The retrieval server answered with an error."""


class RetrievalUnavailable(RetrievalError):
    """No answer from the server after the bounded retries (down, overloaded or hung)."""


class RetrievalRequestError(RetrievalError, ValueError):
    """The server refused the request (4xx): retrying the same request cannot help."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(f"HTTP {status}: {reason}")
        self.status = status
        self.reason = reason


_RETRYABLE = (ConnectionError, http.client.HTTPException, OSError)


class RetrievalClient:
    """Implements the ``Retriever`` protocol against ``serve-retrieval``.

    Args:
        url: base URL of the server, e.g. ``http://127.0.0.1:8700``.
        timeout_s: seconds to connect, and to wait for each response.
        retries: extra attempts after a connection error or a 503.
        backoff_s: first pause between attempts; doubles each time.
        max_retry_after_s: cap on a server's ``Retry-After``, so a client
            never sleeps longer than its caller's patience.
        max_queries_per_request: ``search_batch`` sends this many queries per
            request at most (the server's default limit is 256).
    """

    def __init__(self, url: str, *, timeout_s: float = 5.0, retries: int = 3,
                 backoff_s: float = 0.05, max_retry_after_s: float = 1.0,
                 max_queries_per_request: int = 256) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"url must look like http://HOST:PORT, got {url!r}")
        if timeout_s <= 0 or retries < 0 or backoff_s < 0 or max_queries_per_request < 1:
            raise ValueError("timeout_s and max_queries_per_request must be positive; "
                             "retries and backoff_s non-negative")
        self.url = url.rstrip("/")
        self.timeout_s = float(timeout_s)
        self.retries = int(retries)
        self.backoff_s = float(backoff_s)
        self.max_retry_after_s = float(max_retry_after_s)
        self.max_queries_per_request = int(max_queries_per_request)
        self._scheme = parts.scheme
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self._local = threading.local()

    def __repr__(self) -> str:
        return (f"RetrievalClient({self.url!r}, timeout_s={self.timeout_s}, "
                f"retries={self.retries}, backoff_s={self.backoff_s})")

    def __getstate__(self) -> dict[str, Any]:
        # Connections belong to one process and thread: never pickle them.
        state = self.__dict__.copy()
        del state["_local"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._local = threading.local()

    # -- Retriever protocol -------------------------------------------------

    def search(self, query: str, k: int) -> list[Hit]:
        """Return the server's top ``k`` hits for ``query``."""
        return self.search_batch([query], k)[0]

    def search_batch(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        """Return the top ``k`` hits for each query, in chunks the server accepts."""
        if isinstance(queries, str) or not all(isinstance(q, str) for q in queries):
            raise TypeError("queries must be a sequence of str (use search() for one query)")
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}")
        results: list[list[Hit]] = []
        step = self.max_queries_per_request
        for start in range(0, len(queries), step):
            chunk = list(queries[start : start + step])
            body = json.dumps({"queries": chunk, "k": k}, separators=(",", ":")).encode()
            payload = self._call("POST", "/search", body)
            rows = payload["results"]
            if len(rows) != len(chunk):
                raise RetrievalError(f"server returned {len(rows)} results for {len(chunk)} queries")
            results.extend(
                [Hit(h["doc_id"], h["score"], h["rank"]) for h in row] for row in rows
            )
        return results

    # -- other endpoints ----------------------------------------------------

    def info(self) -> dict[str, Any]:
        """Return the server's ``/info``: corpus, checksum, back-end, limits, stats."""
        return self._call("GET", "/info", None)

    def health(self) -> bool:
        """Return True if the server answers ``/health`` now (one attempt, no retries)."""
        try:
            status, _, _ = self._roundtrip("GET", "/health", None)
        except (TimeoutError, *_RETRYABLE):
            self.close()
            return False
        return status == 200

    def wait_ready(self, timeout_s: float = 30.0, poll_s: float = 0.05) -> None:
        """Block until ``/health`` answers, e.g. while a server builds its index."""
        deadline = time.monotonic() + timeout_s
        while not self.health():
            if time.monotonic() >= deadline:
                raise RetrievalUnavailable(f"retrieval server at {self.url} not ready "
                                           f"after {timeout_s} s")
            time.sleep(poll_s)

    def close(self) -> None:
        """Close this thread's connection (others close when their thread ends)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "pid", None) == os.getpid():
            conn.close()
        self._local.conn = None

    # -- transport ------------------------------------------------------------

    def _connection(self) -> tuple[http.client.HTTPConnection, bool]:
        """This process's and thread's connection, and whether it was used before."""
        local = self._local
        conn = getattr(local, "conn", None)
        if conn is not None and local.pid == os.getpid():
            return conn, True
        cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
        local.conn = cls(self._host, self._port, timeout=self.timeout_s)
        local.pid = os.getpid()
        return local.conn, False

    def _roundtrip(self, method: str, path: str,
                   body: bytes | None) -> tuple[int, http.client.HTTPMessage, bytes]:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        while True:
            conn, reused = self._connection()
            try:
                conn.request(method, self._prefix + path, body=body, headers=headers)
                response = conn.getresponse()
                data = response.read()
            except (ConnectionError, http.client.RemoteDisconnected):
                self.close()
                if reused:  # the server closed an idle keep-alive connection: reconnect once
                    continue
                raise
            except BaseException:
                self.close()
                raise
            if response.will_close:
                self.close()
            return response.status, response.headers, data

    def _call(self, method: str, path: str, body: bytes | None) -> Any:
        delay = self.backoff_s
        failure = ""
        for attempt in range(self.retries + 1):
            pause = delay
            try:
                status, headers, data = self._roundtrip(method, path, body)
            except TimeoutError as exc:
                raise RetrievalUnavailable(
                    f"retrieval server at {self.url} did not answer {method} {path} "
                    f"within {self.timeout_s} s") from exc
            except _RETRYABLE as exc:
                failure = f"{type(exc).__name__}: {exc}"
            else:
                if status == 200:
                    return json.loads(data)
                reason = _reason(data)
                if status == 503:
                    failure = f"HTTP 503: {reason}"
                    pause = min(_retry_after(headers, delay), self.max_retry_after_s)
                elif 400 <= status < 500:
                    raise RetrievalRequestError(status, reason)
                else:
                    raise RetrievalError(f"retrieval server at {self.url}: HTTP {status}: {reason}")
            if attempt < self.retries:
                time.sleep(pause)
                delay *= 2
        raise RetrievalUnavailable(
            f"retrieval server at {self.url} unavailable after {self.retries + 1} attempts "
            f"({failure}); is `agentenv serve-retrieval` running?")


def _reason(data: bytes) -> str:
    try:
        return str(json.loads(data)["error"])
    except (ValueError, KeyError, TypeError):
        return data[:200].decode("utf-8", "replace")


def _retry_after(headers: http.client.HTTPMessage, default: float) -> float:
    value = headers.get("Retry-After", "")
    try:
        return max(float(value), 0.0)
    except ValueError:  # absent, or an HTTP date: fall back to our own backoff
        return default
