"""A ``Retriever`` that asks a shared retrieval server over HTTP.

Env workers hold this client instead of an index: it is a few fields, so it
pickles into forked or spawned worker processes, and each process (and
thread) opens its own keep-alive connection on first use. It uses only the
standard library, so workers need no extra to talk to a server.

Failure is bounded, and never blamed on the caller's query:

- connection errors and 503s are retried ``retries`` times with exponential
  backoff (honouring ``Retry-After`` up to a cap), all within ``deadline_s``
  in total, then ``RetrievalUnavailable`` is raised naming the URL and how to
  start a server;
- no answer within ``timeout_s`` raises ``RetrievalUnavailable`` ("not
  responding") at once, since a hung server does not get better by being
  asked again;
- a 4xx is the caller's bug and raises ``RetrievalRequestError`` at once.

``deadline_s`` (4 s) is below the env tools' default time limit (5 s,
``agentenv.engine.tools.DEFAULT_TIMEOUT_S``), so an agent's ``search`` call reports
the service as unavailable instead of timing out as if its query were too
broad. Envs build the client from a URL alone, so the knobs can also ride in
its query string: ``http://127.0.0.1:8700?deadline_s=10&retries=5``.

Example:
    >>> client = RetrievalClient("http://127.0.0.1:8700", retries=1)
    >>> client
    RetrievalClient('http://127.0.0.1:8700', timeout_s=3.0, deadline_s=4.0, retries=1, backoff_s=0.05)
    >>> RetrievalClient("http://127.0.0.1:8700?deadline_s=10&retries=5").deadline_s
    10.0
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
from urllib.parse import parse_qsl, urlsplit

from agentenv.engine.tools import ServiceUnavailable
from agentenv.retrieval.base import Hit


class RetrievalError(RuntimeError):
    """The retrieval server answered with an error."""


class RetrievalUnavailable(RetrievalError, ServiceUnavailable):
    """The service did not answer: down, overloaded or hung. Not the request's fault.

    Tool code can catch this type to tell the agent that the retrieval
    service is unavailable (and not that its query was bad).
    """


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
        url: base URL of the server, e.g. ``http://127.0.0.1:8700``; a query
            string may set ``timeout_s``, ``deadline_s``, ``retries`` and
            ``backoff_s`` (keyword arguments win).
        timeout_s: seconds to connect, and to wait for each response.
        deadline_s: seconds one call may take in all, retries and pauses included.
        retries: extra attempts after a connection error or a 503.
        backoff_s: first pause between attempts; doubles each time.
        max_retry_after_s: cap on a server's ``Retry-After``, so a client
            never sleeps longer than its caller's patience.
        max_queries_per_request: ``search_batch`` sends this many queries per
            request at most (the server's default limit is 256).
    """

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float | None = None,
        deadline_s: float | None = None,
        retries: int | None = None,
        backoff_s: float | None = None,
        max_retry_after_s: float = 1.0,
        max_queries_per_request: int = 256,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"url must look like http://HOST:PORT, got {url!r}")
        knobs = _url_knobs(parts.query, url)
        timeout_s = timeout_s if timeout_s is not None else knobs.get("timeout_s", 3.0)
        deadline_s = deadline_s if deadline_s is not None else knobs.get("deadline_s", 4.0)
        retries = retries if retries is not None else int(knobs.get("retries", 3))
        backoff_s = backoff_s if backoff_s is not None else knobs.get("backoff_s", 0.05)
        if (
            timeout_s <= 0
            or deadline_s <= 0
            or retries < 0
            or backoff_s < 0
            or max_queries_per_request < 1
        ):
            raise ValueError(
                "timeout_s, deadline_s and max_queries_per_request must be positive; "
                "retries and backoff_s non-negative"
            )
        self.url = f"{parts.scheme}://{parts.netloc}{parts.path}".rstrip("/")
        self.timeout_s = float(timeout_s)
        self.deadline_s = float(deadline_s)
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
        return (
            f"RetrievalClient({self.url!r}, timeout_s={self.timeout_s}, "
            f"deadline_s={self.deadline_s}, retries={self.retries}, "
            f"backoff_s={self.backoff_s})"
        )

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
                raise RetrievalError(
                    f"server returned {len(rows)} results for {len(chunk)} queries"
                )
            results.extend([Hit(h["doc_id"], h["score"], h["rank"]) for h in row] for row in rows)
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
                raise RetrievalUnavailable(
                    f"retrieval server at {self.url} not ready after {timeout_s} s"
                )
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

    def _roundtrip(
        self, method: str, path: str, body: bytes | None, timeout_s: float | None = None
    ) -> tuple[int, http.client.HTTPMessage, bytes]:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        timeout = self.timeout_s if timeout_s is None else timeout_s
        while True:
            conn, reused = self._connection()
            conn.timeout = timeout  # used when it (re)connects
            if conn.sock is not None:
                conn.sock.settimeout(timeout)
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
        start = time.monotonic()
        deadline = start + self.deadline_s
        delay = self.backoff_s
        failure = ""
        busy = False
        attempts = 0
        while attempts <= self.retries:
            timeout = min(self.timeout_s, deadline - time.monotonic())
            if timeout <= 0:
                break
            attempts += 1
            pause = delay
            try:
                status, headers, data = self._roundtrip(method, path, body, timeout)
            except TimeoutError as exc:
                raise RetrievalUnavailable(
                    f"retrieval service at {self.url} is not responding: no answer to "
                    f"{method} {path} within {timeout:.2g} s. The service is hung or "
                    "overloaded; the request itself is not at fault, so retry later or "
                    "restart the service"
                ) from exc
            except _RETRYABLE as exc:
                failure = f"{type(exc).__name__}: {exc}"
                busy = False
            else:
                if status == 200:
                    return json.loads(data)
                reason = _reason(data)
                if status == 503:
                    failure = f"HTTP 503: {reason}"
                    busy = True
                    pause = min(_retry_after(headers, delay), self.max_retry_after_s)
                elif 400 <= status < 500:
                    raise RetrievalRequestError(status, reason)
                else:
                    raise RetrievalError(f"retrieval server at {self.url}: HTTP {status}: {reason}")
            if attempts > self.retries:
                break
            pause = min(pause, deadline - time.monotonic())
            if pause < 0:
                break
            time.sleep(pause)
            delay *= 2
        spent = time.monotonic() - start
        tried = f"{attempts} attempt{'s' * (attempts != 1)} in {spent:.1f} s"
        if busy:
            raise RetrievalUnavailable(
                f"retrieval service at {self.url} unavailable after {tried}: it is overloaded "
                f"({failure}). Retry later, or start more server workers (--workers)"
            )
        raise RetrievalUnavailable(
            f"retrieval service at {self.url} unavailable after {tried} ({failure}); is "
            f"`agentenv serve-retrieval` running? Start it with `agentenv serve-retrieval "
            f"--corpus CORPUS --port {self._port or 80}` (the corpus of this env, e.g. media), "
            'or give the env an in-process retriever (retriever="bm25")'
        )


_URL_KNOBS = {"timeout_s": float, "deadline_s": float, "retries": int, "backoff_s": float}


def _url_knobs(query: str, url: str) -> dict[str, float]:
    """``timeout_s=...&retries=...`` from a URL's query string, checked."""
    knobs: dict[str, float] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key not in _URL_KNOBS:
            raise ValueError(f"unknown option {key!r} in {url!r}; known: {sorted(_URL_KNOBS)}")
        try:
            knobs[key] = _URL_KNOBS[key](value)
        except ValueError:
            raise ValueError(f"option {key}={value!r} in {url!r} is not a number") from None
    return knobs


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
