"""The OpenEnv server for an agentenv env: OpenEnv's own FastAPI app, behind serve-env's hardening.

OpenEnv builds the routes (``create_fastapi_app``: ``/ws`` sessions, the
stateless ``/reset`` and ``/step``, ``/state``, ``/schema``, ``/health``,
``/metadata``) and holds one env per WebSocket session, at most
``max_live_envs`` of them (``ConcurrencyConfig``), reaping sessions idle for
``trajectory_idle_s``. :class:`Hardened` wraps it with what the retrieval
server's clients already get (the connection guard is added by
:mod:`agentenv.integrations.serve_env.runner`):

* an HTTP body is read in full before OpenEnv sees it, refused past
  ``max_body_bytes`` (413, by header or while streaming), and a client
  disconnecting mid-body is a 400, the same reader as the retrieval server's;
* a WebSocket message is bounded by uvicorn's ``ws_max_size`` (the same
  ``max_body_bytes``), and a WebSocket silent for ``idle_timeout_s`` is closed
  (its session and env with it), so idle sockets cannot hold the env cap;
* the cap is shared per client (:mod:`.session_cap`): at the cap, a new session of a
  client below its share closes the least recently active session of a client above
  its share (close code 1013 and the reason) and starts when it has ended, so a client
  that keeps its sessions open and never finishes cannot keep another from starting;
* every error answer (status >= 400) is logged as one line, and a reset with
  bad start fields is a 422 naming the field instead of a 500 with a traceback;
  a ``POST /reset`` body is read by its grammar (:mod:`.reset_body`) before
  OpenEnv's model coerces it;
  a session that ends (the client gone) logs nothing, where OpenEnv's handler
  would end in a ``WebSocketDisconnect`` traceback.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from agentenv.integrations.openenv.reset_body import reset_body_error
from agentenv.integrations.openenv.session_cap import CLOSE_CODE, Session, SessionCap
from agentenv.integrations.openenv.ws_message import refusal
from agentenv.integrations.serve_env.fair import CLIENT, client_of
from agentenv.integrations.serve_env.limits import EnvServerLimits
from agentenv.integrations.serve_env.sessions import StartError
from agentenv.retrieval.server_app import read_body
from agentenv.retrieval.server_requests import RequestError

logger = logging.getLogger("agentenv.serve_env.openenv")


def build_app(environment: type, limits: EnvServerLimits) -> Hardened:
    """OpenEnv's FastAPI app for ``environment`` (an :class:`AgentEnvEnvironment` subclass), hardened."""
    from fastapi.responses import JSONResponse
    from openenv.core.env_server.http_server import create_fastapi_app
    from openenv.core.env_server.types import ConcurrencyConfig

    from agentenv.integrations.openenv.models import TextAction, TextObservation

    app = create_fastapi_app(
        environment,
        TextAction,
        TextObservation,
        concurrency_config=ConcurrencyConfig(
            max_concurrent_envs=limits.max_live_envs, session_timeout=limits.trajectory_idle_s
        ),
    )

    async def start_error(request: Any, exc: Exception) -> Any:
        return JSONResponse({"detail": f"reset: {exc}"}, status_code=422)

    app.add_exception_handler(StartError, start_error)
    return Hardened(app, limits)


async def _answer(send: Any, status: int, detail: str, *, close: bool = False) -> None:
    """A JSON ``{"detail": ...}`` answer, as OpenEnv's own errors are written."""
    payload = json.dumps({"detail": detail}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
    ]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


class Hardened:
    """ASGI wrapper: bounded HTTP bodies, idle WebSockets closed, one log line per error answer."""

    def __init__(self, app: Any, limits: EnvServerLimits) -> None:
        self.app = app
        self.limits = limits
        self.state = app.state
        self.sessions = SessionCap(limits.max_live_envs)
        """WebSocket sessions per client (:mod:`~agentenv.integrations.openenv.session_cap`)."""

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        client = client_of(scope)
        CLIENT.set(client)  # this request's task (and the session's) only
        if scope["type"] == "http":
            await self.http(scope, receive, send)
        elif scope["type"] == "websocket":
            await self.websocket(scope, receive, send, client)
        else:
            await self.app(scope, receive, send)

    async def websocket(self, scope: dict[str, Any], receive: Any, send: Any, client: str) -> None:
        """One session: counted per client; at the cap it takes slots back (their sessions closed
        and ended first), else OpenEnv refuses it; closed when idle or taken back."""
        session, victims = self.sessions.open(client)
        try:
            if victims:
                logger.info(
                    "at the cap of %d sessions: %s takes back %d session(s) of %s",
                    self.limits.max_live_envs,
                    client,
                    len(victims),
                    ", ".join(sorted({v.client for v in victims})),
                )
                # A victim ends at its next receive (within a step); the bound is for a stuck one.
                await asyncio.wait([v.ended() for v in victims], timeout=5.0)
            closing_send = self.closing(send, session)
            await self.app(
                scope, self.session_receive(receive, closing_send, session), closing_send
            )
        except Exception as err:  # noqa: BLE001 - a session's end is one log line, never a traceback
            # OpenEnv closes the socket after the client has gone, which Starlette reports as
            # WebSocketDisconnect (code 1006), or WebSocketDisconnected where OpenEnv writes to a
            # session already closed (one given up on, closing_send): ordinary ends of a session.
            if type(err).__name__ not in ("WebSocketDisconnect", "WebSocketDisconnected"):
                logger.error(
                    "WebSocket session ended by %s: %s",
                    type(err).__name__,
                    " ".join(str(err).split())[:200],
                )
        finally:
            self.sessions.close(session)

    async def http(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = str(scope.get("path", ""))[:100]
        try:
            body = await read_body(scope, receive, self.limits.max_body_bytes)
        except RequestError as err:
            logger.warning("bad request to %s: %d %s", path, err.status, err.reason)
            # The refused body was not read to its end: the connection cannot carry another
            # request (its next bytes would be the rest of this body).
            await _answer(send, err.status, err.reason, close=True)
            return
        if path == "/reset" and scope.get("method") == "POST":
            refused = reset_body_error(body)
            if refused is not None:
                logger.warning("bad request to %s: 422 reset: %s", path, refused[:200])
                await _answer(send, 422, f"reset: {refused}")
                return
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # waits for the disconnect, as a real receive does

        status = 0

        async def logged_send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif (
                message["type"] == "http.response.body"
                and status >= 400
                and not message.get("more_body")
            ):
                text = message.get("body", b"")[:300].decode(errors="replace")
                logger.warning("bad request to %s: %d %s", path, status, " ".join(text.split()))
            await send(message)

        try:
            await self.app(scope, replay, logged_send)
        except Exception as err:  # noqa: BLE001 - Starlette has answered 500 already; log one line, not a traceback
            logger.error(
                "internal error answering %s: %s: %s",
                path,
                type(err).__name__,
                " ".join(str(err).split())[:200],
            )

    def session_receive(self, receive: Any, send: Any, session: Session) -> Any:
        """``receive`` that reports a disconnect after ``idle_timeout_s`` without a message, or once
        the session is taken back; each message marks the session active. A message OpenEnv's
        handler would end the session over is answered with an error here (:mod:`.ws_message`),
        through ``send`` (:meth:`closing`'s, which gives up on a client that reads nothing back),
        and the next one is waited for."""
        timeout = self.limits.idle_timeout_s
        sessions = self.sessions

        async def limited() -> dict[str, Any]:
            evicted = session.evicted()
            while not evicted.done():
                receiving = asyncio.ensure_future(receive())
                done, _ = await asyncio.wait(
                    (receiving, evicted), timeout=timeout, return_when=asyncio.FIRST_COMPLETED
                )
                if receiving not in done:
                    receiving.cancel()
                    if evicted.done():
                        break
                    logger.info("closing a WebSocket idle for %g s", timeout)
                    return {"type": "websocket.disconnect", "code": 1001}
                sessions.active(session)
                message: dict[str, Any] = receiving.result()
                text = message.get("text")
                if (text is None or text[:1] != "{") and message["type"] == "websocket.receive":
                    refused = refusal(message)
                    if refused is not None:
                        # debug: a client can send thousands a second (OpenEnv logs its own none)
                        logger.debug("bad WebSocket message: %s", refused[:300])
                        await send({"type": "websocket.send", "text": refused})
                        continue
                return message
            logger.info("closing a WebSocket of %s: %s", session.client, session.reason)
            return {"type": "websocket.disconnect", "code": CLOSE_CODE}

        return limited

    def closing(self, send: Any, session: Session) -> Any:
        """``send`` whose close of a session taken back says so (code 1013 and the reason), and
        that gives up on a client that reads nothing back.

        Why: a client that stopped reading left OpenEnv's handler waiting in its reply's send,
        where neither the idle timeout nor eviction (both read at ``receive``) reached it: two
        such sessions held both env slots past the idle timeout, and a client that took a slot
        back waited the whole eviction bound and got no session. Now a reply not taken within
        ``idle_timeout_s`` (or once the session is taken back) ends the session with a
        disconnect: OpenEnv gives its env back; its close frame gets a second at most.
        """
        from starlette.websockets import WebSocketDisconnect

        timeout = self.limits.idle_timeout_s
        gave_up = False

        async def closing_send(message: dict[str, Any]) -> None:
            nonlocal gave_up
            closing = message["type"] == "websocket.close"
            if closing and session.reason is not None:
                message = {**message, "code": CLOSE_CODE, "reason": session.reason[:120]}
            if gave_up:
                if closing:
                    return
                raise WebSocketDisconnect(code=1001)
            evicted = session.evicted()
            sending = asyncio.ensure_future(send(message))
            waits = (sending,) if closing or evicted.done() else (sending, evicted)
            done, _ = await asyncio.wait(
                waits, timeout=1.0 if closing else timeout, return_when=asyncio.FIRST_COMPLETED
            )
            if sending in done:
                sending.result()
                return
            sending.cancel()
            gave_up = True
            logger.info("closing a WebSocket of %s that read nothing back", session.client)
            if not closing:
                raise WebSocketDisconnect(code=1001)

        return closing_send
