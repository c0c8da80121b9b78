"""One retrieval index served over HTTP, so many rollout workers share it.

Loading an index once per env worker multiplies memory and start-up time by
the number of workers; serving it once and batching the workers' queries
turns many small ``search`` calls into few ``search_batch`` calls, which the
vectorised back-ends answer much faster per query.

Endpoints (JSON in, JSON out):

- ``POST /search`` ``{"queries": [str, ...], "k": int}`` →
  ``{"results": [[{"doc_id", "score", "rank"}, ...], ...]}``, one list per query.
- ``GET /health`` → ``{"status": "ok"}``.
- ``GET /info`` → the caller's ``info`` (corpus, checksum, back-end, parameters),
  plus ``limits``, ``workers``, and the answering process's ``pid`` and live
  ``stats`` (requests, queries, batches, rejected).

Errors are JSON ``{"error": reason}``: 400 malformed HTTP or JSON (too deep,
not UTF-8), 408 headers or body too slow, 413 body too large, 431 headers too
large, 422 a well-formed body that breaks the schema or a limit (naming the
field), 503 (with ``Retry-After``) when the in-flight queue is full, 500 only
when the back-end fails. No client input reaches a bare 500.

Idle and slow connections cannot lock clients out: headers have a deadline,
idle keep-alive connections time out, and at the connection caps (total and
per client address) the longest-waiting connection yields to the new one
(:mod:`agentenv.retrieval.connections`). With ``workers > 1`` a dead worker
is forked again while the others keep serving
(:mod:`agentenv.retrieval.workers`).

One process serves at most one core's worth of requests; ``serve(workers=N)``
forks N processes that share the built index. uvicorn picks httptools and
uvloop when they are installed, which halves the HTTP cost per request.
The hot path: ``POST /search`` is answered before Starlette's middleware and
router, each response leaves in one write (the connection guard holds
uvicorn's head until the body), and hits are encoded with cached
per-document text (:class:`~agentenv.retrieval.batching.HitEncoder`).
``benchmarks/retrieval_server.py`` measures it against the budget.

The server needs the ``server`` extra (starlette, uvicorn); importing this
module without it works, and only ``create_app``/``serve`` raise ImportError.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import json
import logging
import os
import socket
import threading
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from agentenv.retrieval.base import Retriever
from agentenv.retrieval.batching import BatchStats, MicroBatcher, Overloaded
from agentenv.retrieval.connections import ConnectionGuard, GuardSettings, guarded_protocol
from agentenv.retrieval.workers import reset_child_signals, supervise

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

logger = logging.getLogger(__name__)

_EXTRA_HINT = "the retrieval server needs the 'server' extra: pip install 'agentenv[server]'"


@dataclasses.dataclass(frozen=True)
class ServerLimits:
    """Bounds on what one request may ask and how much work may wait.

    Every bound exists so that one bad or greedy client cannot take the shared
    index away from the others: request-size bounds cap the work per request,
    the in-flight bound turns overload into a fast 503 instead of an unbounded
    queue whose latency grows until every client times out.
    """

    max_queries_per_request: int = 256
    """Queries in one ``POST /search``; clients split larger batches."""
    max_query_chars: int = 2048
    """Characters in one query; longer text is a bug upstream, not a query."""
    max_k: int = 100
    """Largest ``k``; tools show a handful of hits, never a whole corpus."""
    max_body_bytes: int = 1 << 20
    """Bytes in a request body (1 MiB), checked before JSON parsing."""
    max_batch_queries: int = 512
    """Queries merged into one ``search_batch`` call."""
    max_wait_ms: float = 1.0
    """How long an idle server waits for more queries before running a batch."""
    max_inflight_queries: int = 8192
    """Queries accepted but not yet answered; beyond this requests get 503."""
    retry_after_s: int = 1
    """The ``Retry-After`` value (whole seconds, as HTTP requires) sent with 503."""
    max_connections: int = 1024
    """Open connections per server process. At the cap the connection that has waited
    longest without a request in flight is closed to make room (see
    :mod:`agentenv.retrieval.connections`); 503 only when every one is busy."""
    max_connections_per_client: int = 512
    """Open connections from one client address, enforced the same way: a client that
    hoards idle connections loses its own oldest ones, not anyone else's."""
    header_timeout_s: float = 5.0
    """Seconds to send a request's headers, from connecting or from the request's first
    byte; a silent or trickling ("slowloris") connection is closed after this."""
    idle_timeout_s: float = 60.0
    """Seconds a keep-alive connection may wait between requests (env workers think
    between searches, so this is long; idle connections also yield to new ones)."""
    body_timeout_s: float = 10.0
    """Seconds to send a request's body once its headers are in."""
    max_header_bytes: int = 32768
    """Bytes of request line and headers; beyond this the answer is 431."""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value < 0 or (value == 0 and field.name != "max_wait_ms"):
                raise ValueError(f"ServerLimits.{field.name} must be positive, got {value!r}")


class RequestError(Exception):
    """A client mistake, answered with ``status`` and a reason the client can act on."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def parse_search_body(body: bytes, limits: ServerLimits) -> tuple[list[str], int]:
    """Validate a ``POST /search`` body; raise RequestError saying what is expected.

    Example:
        >>> parse_search_body(b'{"queries": ["heat"], "k": 3}', ServerLimits())
        (['heat'], 3)
        >>> parse_search_body(b'{"queries": "heat", "k": 3}', ServerLimits())
        Traceback (most recent call last):
        ...
        agentenv.retrieval.server.RequestError: 'queries' must be a list of strings, got str
    """
    if len(body) > limits.max_body_bytes:
        raise RequestError(413, f"body has {len(body)} bytes; at most {limits.max_body_bytes}")
    try:
        payload = json.loads(body, parse_int=_bounded_int)
    except RecursionError:
        raise RequestError(400, f"{_deep_field(body)} nests too deeply; expected "
                                '{"queries": [str, ...], "k": int}') from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise RequestError(400, f"body is not valid UTF-8 JSON ({exc}); expected "
                                '{"queries": [str, ...], "k": int}') from None
    if not isinstance(payload, dict):
        raise RequestError(422, "body must be a JSON object "
                                f'{{"queries": [str, ...], "k": int}}, got {_kind(payload)}')
    missing = [key for key in ("queries", "k") if key not in payload]
    if missing:
        raise RequestError(422, f"missing field(s) {missing}; expected "
                                '{"queries": [str, ...], "k": int}')
    unknown = sorted(set(payload) - {"queries", "k"})
    if unknown:
        raise RequestError(422, f"unknown field(s) {unknown}; only 'queries' and 'k' are accepted")
    queries, k = payload["queries"], payload["k"]
    if not isinstance(queries, list):
        raise RequestError(422, f"'queries' must be a list of strings, got {_kind(queries)}")
    if len(queries) > limits.max_queries_per_request:
        raise RequestError(422, f"'queries' has {len(queries)} items; at most "
                                f"{limits.max_queries_per_request} per request (split the batch)")
    for i, query in enumerate(queries):
        if not isinstance(query, str):
            raise RequestError(422, f"'queries'[{i}] must be a string, got {_kind(query)}")
        if len(query) > limits.max_query_chars:
            raise RequestError(422, f"'queries'[{i}] has {len(query)} characters; at most "
                                    f"{limits.max_query_chars}")
        if not query.isascii():
            try:
                query.encode()
            except UnicodeEncodeError:
                raise RequestError(422, f"'queries'[{i}] is not valid Unicode text (it holds an "
                                        "unpaired surrogate escape)") from None
    if not isinstance(k, int) or isinstance(k, bool):
        raise RequestError(422, f"'k' must be an integer between 1 and {limits.max_k}, "
                                f"got {_kind(k)}")
    if not 1 <= k <= limits.max_k:
        raise RequestError(422, f"'k' is {k}; expected 1 <= k <= {limits.max_k}")
    return queries, k


_MAX_INT_DIGITS = 30


class _LongNumber:
    """Stands in for a JSON integer too long to be a ``k``, so the schema check names its field.

    ``int()`` refuses strings over 4,300 digits (CVE-2020-10735) with a
    ValueError that would not say which field was wrong, and any integer this
    long is out of range anyway.
    """

    def __init__(self, digits: int) -> None:
        self.digits = digits


def _bounded_int(text: str) -> int | _LongNumber:
    if len(text) > _MAX_INT_DIGITS:
        return _LongNumber(len(text))
    return int(text)


def _kind(value: object) -> str:
    """How an unexpected value is described in an error message."""
    if isinstance(value, _LongNumber):
        return f"an integer with {value.digits} digits"
    return type(value).__name__


def _deep_field(body: bytes) -> str:
    """Which top-level field of a too-deeply nested body holds the nesting ("'queries'", ...).

    Only called on the error path: walks the top-level object key by key,
    decoding each value until one overflows the recursion limit.
    """
    try:
        text = body.decode()
        decoder = json.JSONDecoder(parse_int=_bounded_int)
        ws = json.decoder.WHITESPACE  # type: ignore[attr-defined]
        at = ws.match(text, 0).end()
        if text[at : at + 1] != "{":
            return "the body"
        at = ws.match(text, at + 1).end()
        while text[at : at + 1] == '"':
            key, at = decoder.raw_decode(text, at)
            at = ws.match(text, at).end() + 1  # the ':'
            at = ws.match(text, at).end()
            try:
                _, at = decoder.raw_decode(text, at)
            except RecursionError:
                return repr(str(key))
            at = ws.match(text, at).end() + 1  # the ','
            at = ws.match(text, at).end()
    except (ValueError, RecursionError, AttributeError):
        pass
    return "the body"


def _require_extra() -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise ImportError(_EXTRA_HINT) from exc


def create_app(retriever: Retriever, info: dict[str, Any], *,
               limits: ServerLimits | None = None, offload_search: bool = False) -> Starlette:
    """Build the ASGI app serving ``retriever``; ``info`` is echoed by ``GET /info``.

    ``offload_search`` runs ``search_batch`` in a worker thread: worth it only
    for back-ends that release the GIL (see :class:`MicroBatcher`).

    Raises:
        ImportError: without the ``server`` extra.
    """
    _require_extra()
    from starlette.exceptions import HTTPException
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    limits = limits or ServerLimits()
    batcher = MicroBatcher(
        retriever, max_batch_queries=limits.max_batch_queries,
        max_wait_s=limits.max_wait_ms / 1000.0,
        max_inflight_queries=limits.max_inflight_queries, offload=offload_search)

    def error(status: int, reason: str) -> Response:
        return JSONResponse({"error": reason}, status_code=status)

    async def health(request: Request) -> Response:
        return Response(b'{"status":"ok"}', media_type="application/json")

    async def show_info(request: Request) -> Response:
        body = dict(info)
        body["pid"] = os.getpid()
        body["limits"] = dataclasses.asdict(limits)
        body["stats"] = dataclasses.asdict(batcher.stats)
        guard = getattr(request.app.state, "connections", None)
        if guard is not None:
            body["connections"] = dataclasses.asdict(guard.stats)
        return JSONResponse(body)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        # The raw scope path: request.url re-parses the Host header, which a
        # client controls and which can make URL parsing raise.
        path = str(request.scope.get("path", ""))[:200]
        return error(exc.status_code, f"{exc.detail}: {request.method} {path!r}; "
                                      "endpoints are POST /search, GET /health, GET /info")

    async def server_error(request: Request, exc: Exception) -> Response:
        logger.error("unhandled error answering %s", request.scope.get("path"), exc_info=exc)
        return error(500, f"internal error: {type(exc).__name__}")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await batcher.start()
        try:
            yield
        finally:
            await batcher.stop()

    search = SearchEndpoint(batcher, limits)
    app = _app_class()(
        routes=[
            Route("/search", search, methods=["POST"]),
            Route("/health", health, methods=["GET"]),
            Route("/info", show_info, methods=["GET"]),
        ],
        exception_handlers={HTTPException: http_error, Exception: server_error},
        lifespan=lifespan,
    )
    app.state.batcher = batcher
    app.search_endpoint = search
    return app


@functools.cache
def _app_class() -> type[Starlette]:
    from starlette.applications import Starlette

    class RetrievalApp(Starlette):
        """Starlette, with ``POST /search`` answered before its middleware and router.

        The hot path skips two middleware layers (each wrapping ``send`` in
        another coroutine) and the router's pattern matching. ``SearchEndpoint``
        answers its own errors as JSON, the same as the skipped layers would.
        Every other path and method (``/search/``, ``GET /search``) still goes
        through Starlette.
        """

        search_endpoint: SearchEndpoint

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http" and scope["path"] == "/search" \
                    and scope["method"] == "POST":
                await self.search_endpoint(scope, receive, send)
            else:
                await super().__call__(scope, receive, send)

    return RetrievalApp


class SearchEndpoint:
    """``POST /search`` as a bare ASGI app.

    It is the hot path (thousands of requests a second), so it skips
    Starlette's Request/Response objects and speaks ASGI directly.
    """

    def __init__(self, batcher: MicroBatcher, limits: ServerLimits) -> None:
        self.batcher = batcher
        self.limits = limits

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        try:
            status, body, extra = await self.answer(scope, receive)
        except Exception as exc:  # noqa: BLE001 - a bug here still answers JSON, as Starlette would
            logger.error("unhandled error answering /search", exc_info=exc)
            status, body, extra = 500, _error_body(f"internal error: {type(exc).__name__}"), []
        headers = [(b"content-type", b"application/json"),
                   (b"content-length", str(len(body)).encode()), *extra]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def answer(self, scope: dict[str, Any],
                     receive: Any) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        """Return (status, JSON body, extra headers) for one request."""
        try:
            body = await _read_body(scope, receive, self.limits.max_body_bytes)
            queries, k = parse_search_body(body, self.limits)
        except RequestError as exc:
            self.batcher.stats.invalid += 1
            return exc.status, _error_body(exc.reason), []
        if not queries:
            return 200, b'{"results":[]}', []
        try:
            encoded = await self.batcher.submit(queries, k)
        except Overloaded as exc:
            wait = str(self.limits.retry_after_s)
            reason = f"server overloaded ({exc}); retry after {wait} s"
            return 503, _error_body(reason), [(b"retry-after", wait.encode())]
        except Exception as exc:  # noqa: BLE001 - the back-end failed; say how
            logger.exception("search_batch failed")
            return 500, _error_body(f"back-end error: {type(exc).__name__}: {exc}"), []
        return 200, b'{"results":[' + b",".join(encoded) + b"]}", []


def _error_body(reason: str) -> bytes:
    return json.dumps({"error": reason}).encode()


async def _read_body(scope: dict[str, Any], receive: Any, max_bytes: int) -> bytes:
    """Read the body, refusing early (by header or while streaming) past ``max_bytes``."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            if not value.isdigit():
                raise RequestError(400, f"invalid Content-Length header {value[:40]!r}")
            # Compare digit counts first: int() refuses over 4,300 digits.
            if len(value.lstrip(b"0")) > len(str(max_bytes)) or int(value) > max_bytes:
                raise RequestError(413, f"body has {value[:40].decode()} bytes; "
                                        f"at most {max_bytes}")
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise RequestError(400, "client disconnected before sending the whole body")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > max_bytes:
            raise RequestError(413, f"body exceeds {max_bytes} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def guard_settings(limits: ServerLimits) -> GuardSettings:
    """The connection guard's view of ``limits``."""
    return GuardSettings(
        max_connections=limits.max_connections,
        max_connections_per_client=limits.max_connections_per_client,
        header_timeout_s=limits.header_timeout_s, idle_timeout_s=limits.idle_timeout_s,
        body_timeout_s=limits.body_timeout_s, max_header_bytes=limits.max_header_bytes)


def _uvicorn_server(app: Starlette, sock: socket.socket, limits: ServerLimits,
                    log_level: str) -> Any:
    import uvicorn

    guard = ConnectionGuard(guard_settings(limits))
    app.state.connections = guard
    host, port = sock.getsockname()[:2]
    config = uvicorn.Config(
        app, host=host, port=port, log_level=log_level, access_log=False, lifespan="on",
        http=guarded_protocol(guard, limits.retry_after_s), ws="none",
        # The guard caps connections by closing idle ones; uvicorn's own cap would
        # answer 503 to everyone while idle sockets hold it (and MicroBatcher
        # bounds the work in flight).
        limit_concurrency=None,
        # Loopback service, no proxy in front: skip the header rewriting.
        proxy_headers=False, server_header=False,
        # Env workers think (an LLM call) between searches: keep their connection.
        timeout_keep_alive=max(1, round(limits.idle_timeout_s)),
        h11_max_incomplete_event_size=limits.max_header_bytes,
    )
    return uvicorn.Server(config)


def _bind(host: str, port: int, *, reuse_port: bool = False) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # An explicit IPPROTO_TCP lets asyncio set TCP_NODELAY on accepted sockets;
    # without it each response (headers, then body) waits ~40 ms on delayed ACKs.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    return sock


def raise_fd_limit(needed: int) -> int:
    """Raise the soft open-file limit towards ``needed`` (up to the hard limit); return it.

    Each connection is a file descriptor. At the limit ``accept()`` fails and
    asyncio stops accepting for a second at a time, which no eviction policy
    can help: the cap on connections must stay below the descriptor limit.
    """
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return needed
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
    return needed if soft == resource.RLIM_INFINITY else soft


_FD_RESERVE = 64
"""Descriptors kept free beside connections: listening socket, event loop, logs, index files."""


def serve(retriever: Retriever, info: dict[str, Any], host: str = "127.0.0.1",
          port: int = 8700, *, limits: ServerLimits | None = None,
          offload_search: bool = False, workers: int = 1, log_level: str = "warning",
          max_restarts: int = 10) -> None:
    """Serve ``retriever`` until interrupted (Ctrl-C / SIGTERM).

    The default host is loopback: the server has no authentication, so
    exposing it on another interface is a deliberate choice of the caller.

    The (immutable) index is first moved out of the garbage collector's
    sight with ``gc.freeze()``: otherwise every full collection walks millions
    of index objects and stalls all requests for tens of ms (measured: p99
    100 ms → 30 ms under 64 clients).

    ``workers > 1`` forks that many server processes once the index is built.
    They share its memory (copy-on-write), and each listens on the port with
    ``SO_REUSEPORT`` so the kernel spreads connections over them: one Python
    process tops out at one core. Each batches its own requests, and ``/info``
    reports the answering process's stats and pid. A worker that dies is
    forked again from this process (which still holds the index) while the
    others keep serving; more than ``max_restarts`` deaths a minute stop the
    server with an error. Fork only a process without threads: keep
    ``workers=1`` for back-ends with thread pools (faiss, torch), which do
    not survive a fork.
    """
    _require_extra()
    limits = limits or ServerLimits()
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if host not in ("127.0.0.1", "localhost", "::1"):
        logger.warning("retrieval server binding %s: it has no authentication", host)
    fds = raise_fd_limit(limits.max_connections + _FD_RESERVE)
    if fds < limits.max_connections + _FD_RESERVE:
        capped = max(fds - _FD_RESERVE, 1)
        logger.warning("open-file limit %d: capping max_connections at %d (raise `ulimit -n`)",
                       fds, capped)
        limits = dataclasses.replace(
            limits, max_connections=capped,
            max_connections_per_client=min(limits.max_connections_per_client, capped))
    info = {**info, "workers": workers}
    gc.collect()
    gc.freeze()
    if workers == 1:
        _serve_here(retriever, info, _bind(host, port), limits, offload_search, log_level)
        return
    if not hasattr(socket, "SO_REUSEPORT") or not hasattr(os, "fork"):
        raise RuntimeError("workers > 1 needs os.fork and SO_REUSEPORT (Linux, macOS)")
    guarded_protocol(ConnectionGuard(GuardSettings()))  # import uvicorn's protocol before forking
    # Every worker's socket listens before any worker starts, so connections made
    # while some are still starting queue at their own worker instead of all
    # landing on the first one up (keep-alive would pin them there for good).
    first = [_bind(host, port, reuse_port=True)]
    port = first[0].getsockname()[1]
    first += [_bind(host, port, reuse_port=True) for _ in range(workers - 1)]
    for sock in first:
        sock.listen(2048)

    def spawn(slot: int) -> int:
        if first[slot].fileno() >= 0:
            mine = first[slot]
        else:  # a restart: a new socket joins the port's group
            mine = _bind(host, port, reuse_port=True)
            mine.listen(2048)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            code = 0
            try:
                reset_child_signals()
                # Only the worker may hold its socket: when it dies the socket closes
                # and leaves the group, instead of queueing connections nobody serves.
                for other in first:
                    if other is not mine:
                        other.close()
                _serve_here(retriever, info, mine, limits, offload_search, log_level)
            except BaseException:
                logger.exception("retrieval server worker failed")
                code = 1
            finally:
                os._exit(code)
        mine.close()
        return pid

    supervise(spawn, workers, max_restarts=max_restarts)


def _serve_here(retriever: Retriever, info: dict[str, Any], sock: socket.socket,
                limits: ServerLimits, offload_search: bool, log_level: str) -> None:
    app = create_app(retriever, info, limits=limits, offload_search=offload_search)
    _uvicorn_server(app, sock, limits, log_level).run(sockets=[sock])


class BackgroundServer:
    """A real uvicorn server in a daemon thread, for tests and single-process trainers.

    Binds before starting, so ``port=0`` picks a free port and ``url`` is
    known at once; ``stop()`` (or leaving the ``with`` block) shuts it down.
    """

    def __init__(self, retriever: Retriever, info: dict[str, Any], host: str = "127.0.0.1",
                 port: int = 0, *, limits: ServerLimits | None = None,
                 offload_search: bool = False, log_level: str = "warning") -> None:
        _require_extra()
        self.limits = limits or ServerLimits()
        self.app = create_app(retriever, info, limits=self.limits, offload_search=offload_search)
        self._sock = _bind(host, port)
        bound_host, bound_port = self._sock.getsockname()[:2]
        if ":" in bound_host:
            bound_host = f"[{bound_host}]"
        self.url = f"http://{bound_host}:{bound_port}"
        self._server = _uvicorn_server(self.app, self._sock, self.limits, log_level)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]},
                                        name="retrieval-server", daemon=True)

    @property
    def stats(self) -> BatchStats:
        """Live counters of the micro-batcher (requests, queries, batches, rejected)."""
        return self.app.state.batcher.stats

    def start(self, timeout_s: float = 10.0) -> BackgroundServer:
        """Start serving (once; later calls return at once) and wait until it accepts connections."""
        if self._thread.ident is not None:
            return self
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and self._thread.is_alive():
            if self._server.started:
                return self
            time.sleep(0.01)
        raise RuntimeError(f"retrieval server at {self.url} did not start within {timeout_s} s")

    def stop(self, timeout_s: float = 5.0) -> None:
        """Ask uvicorn to exit and wait for the thread."""
        self._server.should_exit = True
        self._thread.join(timeout_s)
        self._sock.close()

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
