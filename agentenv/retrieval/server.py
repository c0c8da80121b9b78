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

Three files, one purpose each: this one runs the server (sockets, uvicorn,
worker processes, :class:`BackgroundServer`); :mod:`agentenv.retrieval.server_app`
is the ASGI app; :mod:`agentenv.retrieval.server_requests` holds the limits and
the search body's parser. The app's and the limits' names are re-exported here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import logging
import os
import socket
from typing import TYPE_CHECKING, Any

from agentenv.errors import UserInputError
from agentenv.retrieval.background import ThreadedUvicorn
from agentenv.retrieval.base import Retriever
from agentenv.retrieval.batching import BatchStats
from agentenv.retrieval.connections import ConnectionGuard, GuardSettings, guarded_protocol
from agentenv.retrieval.server_app import create_app, require_server_extra
from agentenv.retrieval.server_requests import RequestError, ServerLimits, parse_search_body
from agentenv.retrieval.workers import reset_child_signals, supervise
from agentenv.terminal_text import terminal_text

if TYPE_CHECKING:
    from starlette.applications import Starlette

logger = logging.getLogger(__name__)

__all__ = [
    "BackgroundServer",
    "RequestError",
    "ServerLimits",
    "create_app",
    "parse_search_body",
    "serve",
]


def guard_settings(limits: ServerLimits) -> GuardSettings:
    """The connection guard's view of ``limits``."""
    return GuardSettings(
        max_connections=limits.max_connections,
        max_connections_per_client=limits.max_connections_per_client,
        header_timeout_s=limits.header_timeout_s,
        idle_timeout_s=limits.idle_timeout_s,
        body_timeout_s=limits.body_timeout_s,
        max_header_bytes=limits.max_header_bytes,
    )


def _uvicorn_server(
    app: Starlette, sock: socket.socket, limits: ServerLimits, log_level: str
) -> Any:
    import uvicorn

    guard = ConnectionGuard(guard_settings(limits))
    app.state.connections = guard
    host, port = sock.getsockname()[:2]
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        lifespan="on",
        http=guarded_protocol(guard, limits.retry_after_s),
        ws="none",
        # The guard caps connections by closing idle ones; uvicorn's own cap would
        # answer 503 to everyone while idle sockets hold it (and MicroBatcher
        # bounds the work in flight).
        limit_concurrency=None,
        # Loopback service, no proxy in front: skip the header rewriting.
        proxy_headers=False,
        server_header=False,
        # Env workers think (an LLM call) between searches: keep their connection.
        timeout_keep_alive=max(1, round(limits.idle_timeout_s)),
        h11_max_incomplete_event_size=limits.max_header_bytes,
    )
    return uvicorn.Server(config)


def bind_listener(host: str, port: int, *, reuse_port: bool = False) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # An explicit IPPROTO_TCP lets asyncio set TCP_NODELAY on accepted sockets;
    # without it each response (headers, then body) waits ~40 ms on delayed ACKs.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError as err:  # a port in use, an address not on this machine, a name not found
        sock.close()
        why = err.strerror or str(err)
        raise UserInputError(
            f"cannot listen on {host}:{port}: {why[:1].lower()}{why[1:]} (choose another --port, "
            "or a --host this machine has)"
        ) from None
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


def serve(
    retriever: Retriever,
    info: dict[str, Any],
    host: str = "127.0.0.1",
    port: int = 8700,
    *,
    limits: ServerLimits | None = None,
    offload_search: bool = False,
    workers: int = 1,
    log_level: str = "warning",
    max_restarts: int = 10,
) -> None:
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
    require_server_extra()
    limits = limits or ServerLimits()
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if host not in ("127.0.0.1", "localhost", "::1"):
        logger.warning("retrieval server binding %s: it has no authentication", terminal_text(host))
    fds = raise_fd_limit(limits.max_connections + _FD_RESERVE)
    if fds < limits.max_connections + _FD_RESERVE:
        capped = max(fds - _FD_RESERVE, 1)
        logger.warning(
            "open-file limit %d: capping max_connections at %d (raise `ulimit -n`)", fds, capped
        )
        limits = dataclasses.replace(
            limits,
            max_connections=capped,
            max_connections_per_client=min(limits.max_connections_per_client, capped),
        )
    info = {**info, "workers": workers}
    gc.collect()
    gc.freeze()
    if workers == 1:
        _serve_here(retriever, info, bind_listener(host, port), limits, offload_search, log_level)
        return
    if not hasattr(socket, "SO_REUSEPORT") or not hasattr(os, "fork"):
        raise RuntimeError("workers > 1 needs os.fork and SO_REUSEPORT (Linux, macOS)")
    guarded_protocol(ConnectionGuard(GuardSettings()))  # import uvicorn's protocol before forking
    # Every worker's socket listens before any worker starts, so connections made
    # while some are still starting queue at their own worker instead of all
    # landing on the first one up (keep-alive would pin them there for good).
    first = [bind_listener(host, port, reuse_port=True)]
    port = first[0].getsockname()[1]
    first += [bind_listener(host, port, reuse_port=True) for _ in range(workers - 1)]
    for sock in first:
        sock.listen(2048)

    def spawn(slot: int) -> int:
        if first[slot].fileno() >= 0:
            mine = first[slot]
        else:  # a restart: a new socket joins the port's group
            mine = bind_listener(host, port, reuse_port=True)
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


def _serve_here(
    retriever: Retriever,
    info: dict[str, Any],
    sock: socket.socket,
    limits: ServerLimits,
    offload_search: bool,
    log_level: str,
) -> None:
    app = create_app(retriever, info, limits=limits, offload_search=offload_search)
    _uvicorn_server(app, sock, limits, log_level).run(sockets=[sock])


class BackgroundServer(ThreadedUvicorn):
    """A real uvicorn server in a daemon thread, for tests and single-process trainers.

    Binds before starting, so ``port=0`` picks a free port and ``url`` is
    known at once; ``stop()`` (or leaving the ``with`` block) shuts it down.
    """

    what = "retrieval server"

    def __init__(
        self,
        retriever: Retriever,
        info: dict[str, Any],
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        limits: ServerLimits | None = None,
        offload_search: bool = False,
        log_level: str = "warning",
    ) -> None:
        require_server_extra()
        self.limits = limits or ServerLimits()
        self.app = create_app(retriever, info, limits=self.limits, offload_search=offload_search)
        sock = bind_listener(host, port)
        server = _uvicorn_server(self.app, sock, self.limits, log_level)
        self._serve_in_thread(server, sock, "retrieval-server")

    @property
    def stats(self) -> BatchStats:
        """Live counters of the micro-batcher (requests, queries, batches, rejected)."""
        return self.app.state.batcher.stats
