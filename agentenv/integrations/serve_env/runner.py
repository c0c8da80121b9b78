"""Run an env server's ASGI app under uvicorn, behind the retrieval server's connection guard.

The hardening is the retrieval server's, reused rather than copied: the
socket binding (``TCP_NODELAY`` on accepted sockets), the open-file limit, and
:class:`~agentenv.retrieval.connections.ConnectionGuard` (header, body and
keep-alive deadlines; caps on connections in total and per client address,
where the connection waiting longest yields to a new one; 431 for oversized
headers; JSON for malformed HTTP). One addition: a WebSocket upgrade (OpenEnv's
``/ws``) leaves the guard, since it is no longer an HTTP request; its session
is bounded by ``max_live_envs`` and its silence by ``idle_timeout_s`` instead
(:mod:`agentenv.integrations.openenv.app`).

Loopback by default: the server has no authentication, so another interface
is the caller's deliberate choice, and it is logged.
"""

from __future__ import annotations

import dataclasses
import gc
import logging
from collections.abc import Callable
from typing import Any

from agentenv.integrations.serve_env.limits import EnvServerLimits
from agentenv.retrieval.background import ThreadedUvicorn
from agentenv.terminal_text import terminal_text

logger = logging.getLogger("agentenv.serve_env")

LOOPBACK = ("127.0.0.1", "localhost", "::1")
_FD_RESERVE = 64
"""Descriptors kept free beside connections (listening socket, event loop, logs, corpora)."""


def require_env_server_extra() -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            "serve-env needs the 'server' extra: pip install 'agentenv[server]'"
        ) from exc


def _protocol(guard: Any, limits: EnvServerLimits, websockets: bool, app: Any = None) -> type:
    from agentenv.retrieval.connections import guarded_protocol

    base = guarded_protocol(guard, limits.retry_after_s)
    if not websockets:
        from agentenv.integrations.serve_env.lean_http import hot_paths, lean_protocol

        hot = hot_paths(app)
        if not hot:
            return base
        return lean_protocol(
            base,
            app,
            hot,
            max_body_bytes=limits.max_body_bytes,
            max_header_bytes=guard.settings.max_header_bytes,
        )

    class UpgradingProtocol(base):  # type: ignore[valid-type, misc]
        def handle_websocket_upgrade(self, *args: Any) -> None:
            # The transport now belongs to the WebSocket protocol: the guard must neither
            # time it out as an unfinished HTTP request nor count it as an open connection.
            guard.release(self)
            super().handle_websocket_upgrade(*args)

    return UpgradingProtocol


def uvicorn_server(
    app: Any,
    sock: Any,
    limits: EnvServerLimits,
    *,
    websockets: bool = False,
    log_level: str = "warning",
) -> Any:
    """A ``uvicorn.Server`` for ``app`` on the bound ``sock``, guarded by ``limits``."""
    import uvicorn

    from agentenv.retrieval.connections import ConnectionGuard
    from agentenv.retrieval.server import guard_settings

    guard = ConnectionGuard(guard_settings(limits))  # type: ignore[arg-type] - same field names
    if hasattr(app, "state"):
        app.state.connections = guard
    host, port = sock.getsockname()[:2]
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        lifespan="on",
        http=_protocol(guard, limits, websockets, app),
        ws="websockets-sansio" if websockets else "none",
        ws_max_size=limits.max_body_bytes,
        # No permessage-deflate: on loopback it only costs CPU, and it cost more than the step
        # (a 50 KB observation took ~4 ms to compress, outside the per-client turns).
        ws_per_message_deflate=False,
        ws_ping_interval=None,
        limit_concurrency=None,
        proxy_headers=False,
        server_header=False,
        timeout_keep_alive=max(1, round(limits.idle_timeout_s)),
        h11_max_incomplete_event_size=limits.max_header_bytes,
    )
    return uvicorn.Server(config)


def checked_limits(host: str, limits: EnvServerLimits, *, warn: bool = True) -> EnvServerLimits:
    """``limits`` with ``max_connections`` under the open-file limit; warns off loopback (``warn``)."""
    from agentenv.retrieval.server import raise_fd_limit

    if warn and host not in LOOPBACK:
        logger.warning(
            "serve-env binding %s: the server has no authentication", terminal_text(host)
        )
    fds = raise_fd_limit(limits.max_connections + limits.max_live_envs + _FD_RESERVE)
    room = fds - _FD_RESERVE
    if room < limits.max_connections:
        capped = max(room, 1)
        logger.warning(
            "open-file limit %d: capping max_connections at %d (raise `ulimit -n`)", fds, capped
        )
        limits = dataclasses.replace(
            limits,
            max_connections=capped,
            max_connections_per_client=min(limits.max_connections_per_client, capped),
        )
    return limits


def configure_logging(log_level: str) -> None:
    """serve-env's own log lines (one per bad request, at warning) on stderr, at ``log_level`` and above."""
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s serve-env %(levelname)s: %(message)s"))
        logger.addHandler(handler)
        logger.propagate = False
    logger.setLevel(log_level.upper())


def serve(
    app: Any,
    host: str,
    port: int,
    limits: EnvServerLimits,
    *,
    websockets: bool = False,
    log_level: str = "warning",
    announce: Callable[[int], None] | None = None,
) -> None:
    """Serve ``app`` on ``host:port`` until interrupted (Ctrl-C / SIGTERM); ``announce`` is called
    with the port once it is bound (the real one for ``port=0``), so a banner never names a port
    that is not listening."""
    from agentenv.retrieval.server import bind_listener

    require_env_server_extra()
    configure_logging(log_level)
    limits = checked_limits(host, limits)
    sock = bind_listener(host, port)
    if announce is not None:
        announce(sock.getsockname()[1])
    serve_socket(app, sock, limits, websockets=websockets, log_level=log_level)


def serve_socket(
    app: Any,
    sock: Any,
    limits: EnvServerLimits,
    *,
    websockets: bool = False,
    log_level: str = "warning",
) -> bool:
    """Serve ``app`` on the bound ``sock`` (one of ``--fronts``' shared sockets, or :func:`serve`'s)
    until interrupted; False if it never started (the app's startup failed)."""
    server = uvicorn_server(app, sock, limits, websockets=websockets, log_level=log_level)
    # The env's corpora and indexes are built and immutable: out of the collector's sight, full
    # collections do not walk them while requests wait (as the retrieval server does).
    gc.collect()
    gc.freeze()
    server.run(sockets=[sock])
    return bool(server.started)


class BackgroundServer(ThreadedUvicorn):
    """A real uvicorn server for ``app`` in a daemon thread, for tests, benchmarks and one-process trainers.

    Binds before starting, so ``port=0`` picks a free port and ``url`` is known
    at once; ``stop()`` (or leaving the ``with`` block) shuts it down.
    """

    what = "env server"

    def __init__(
        self,
        app: Any,
        limits: EnvServerLimits | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        websockets: bool = False,
        log_level: str = "warning",
    ) -> None:
        from agentenv.retrieval.server import bind_listener

        require_env_server_extra()
        self.app = app
        self.limits = checked_limits(host, limits or EnvServerLimits())
        sock = bind_listener(host, port)
        server = uvicorn_server(app, sock, self.limits, websockets=websockets, log_level=log_level)
        self._serve_in_thread(server, sock, "serve-env")
