"""The retrieval server's ASGI app: ``POST /search`` on the hot path, ``/health`` and ``/info``.

``POST /search`` is answered before Starlette's middleware and router
(:class:`SearchEndpoint`), its body checked by
:func:`~agentenv.retrieval.server_requests.parse_search_body` and its queries
batched by :class:`~agentenv.retrieval.batching.MicroBatcher`. Processes,
sockets and workers are :mod:`agentenv.retrieval.server`'s.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import logging
import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from agentenv.retrieval.base import Retriever
from agentenv.retrieval.batching import MicroBatcher, Overloaded
from agentenv.retrieval.server_requests import RequestError, ServerLimits, parse_search_body

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

logger = logging.getLogger("agentenv.retrieval.server")

_EXTRA_HINT = "the retrieval server needs the 'server' extra: pip install 'agentenv[server]'"


def require_server_extra() -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise ImportError(_EXTRA_HINT) from exc


def create_app(
    retriever: Retriever,
    info: dict[str, Any],
    *,
    limits: ServerLimits | None = None,
    offload_search: bool = False,
) -> Starlette:
    """Build the ASGI app serving ``retriever``; ``info`` is echoed by ``GET /info``.

    ``offload_search`` runs ``search_batch`` in a worker thread: worth it only
    for back-ends that release the GIL (see :class:`MicroBatcher`).

    Raises:
        ImportError: without the ``server`` extra.
    """
    require_server_extra()
    from starlette.exceptions import HTTPException
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    limits = limits or ServerLimits()
    batcher = MicroBatcher(
        retriever,
        max_batch_queries=limits.max_batch_queries,
        max_wait_s=limits.max_wait_ms / 1000.0,
        max_inflight_queries=limits.max_inflight_queries,
        offload=offload_search,
    )

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
        return error(
            exc.status_code,
            f"{exc.detail}: {request.method} {path!r}; "
            "endpoints are POST /search, GET /health, GET /info",
        )

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
            if scope["type"] == "http" and scope["path"] == "/search" and scope["method"] == "POST":
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
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            *extra,
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def answer(
        self, scope: dict[str, Any], receive: Any
    ) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        """Return (status, JSON body, extra headers) for one request."""
        try:
            body = await read_body(scope, receive, self.limits.max_body_bytes)
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


async def read_body(scope: dict[str, Any], receive: Any, max_bytes: int) -> bytes:
    """Read the body, refusing early (by header or while streaming) past ``max_bytes``."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            if not value.isdigit():
                raise RequestError(400, f"invalid Content-Length header {value[:40]!r}")
            # Compare digit counts first: int() refuses over 4,300 digits.
            if len(value.lstrip(b"0")) > len(str(max_bytes)) or int(value) > max_bytes:
                raise RequestError(
                    413, f"body has {value[:40].decode()} bytes; at most {max_bytes}"
                )
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
