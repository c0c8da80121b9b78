"""A lean HTTP cycle for ``serve-env``'s hot route: the same bytes out, a third of uvicorn's cost per request.

Why: with one trajectory a request and a ``finish`` after it (verl-tool's own
agent loop), an episode is three HTTP requests, and uvicorn's ASGI cycle cost
~90 µs of CPU per request before the app ran (a bare ``asyncio`` protocol on the
same parser costs ~20): the scope dict, a ``RequestResponseCycle``, an
``asyncio.Event`` the app's ``receive`` waits on, a task started before the body
is in, and each response header checked against two regular expressions. For
MediaSearch, whose episode costs ~140 µs in process, that was twice the env.

:func:`lean_protocol` subclasses the guarded uvicorn protocol
(:func:`agentenv.retrieval.connections.guarded_protocol`), so parsing,
keep-alive, the connection guard's caps and deadlines, 400/431 answers,
pipelining and graceful shutdown stay uvicorn's and the guard's (after a lean
answer, the guard's idle deadline alone closes an idle connection: no uvicorn
keep-alive timer is armed). Only a
``POST`` to one of the app's hot paths (``/get_observation``), with no request in
flight on the connection, takes the lean cycle:

* the body is gathered as the parser hands it over, and the app starts once it
  is whole (or at once when ``Content-Length`` already refuses it, or when the
  body runs past ``max_body_bytes``), so its ``receive`` returns without waiting;
* a whole body within the limit goes to the app's ``observe_body`` (a verl-tool
  app's) once the connection guard has seen the request in and the loop has run
  the other reads of its turn (:mod:`~agentenv.integrations.serve_env.turn_batch`):
  an answer ready at once (one slice taken at once, the usual one-trajectory
  request) is written with that turn's other answers, with no task and no ASGI
  messages; one that must wait for its turn, or is long enough to go in pieces,
  is sent by a task through the app's ``send_answer``;
* otherwise the app is called as ASGI, with a small scope (``type``, ``method``,
  ``path``, ``headers``, ``client``); either way its answers and errors are
  exactly those of the ASGI path;
* the response head is uvicorn's (status line, its default ``date`` header, the
  app's headers, ``connection: close`` when the request ends the connection)
  and leaves with the body's first write, in one ``send`` call.

Everything else (``/health``, ``/info``, unknown paths, a pipelined request
behind one in flight) goes through uvicorn's own cycle. A request with an upgrade the server does
not perform is read again without its ``Upgrade`` header
(:func:`~agentenv.retrieval.connections.guarded_protocol`), and then takes its path as
any other. An answer that starts before its request's body is in ends the connection
(:func:`~agentenv.retrieval.connections.linger`), on either cycle.
"""

from __future__ import annotations

import logging
from typing import Any

from agentenv.integrations.serve_env.answer_body import answer_headers, json_header_lines
from agentenv.integrations.serve_env.turn_batch import turn_of
from agentenv.retrieval.connections import linger

logger = logging.getLogger("agentenv.serve_env")

_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


class _NoEvent:
    """What uvicorn's ``connection_lost`` sets on a cycle (nothing waits on a lean one)."""

    __slots__ = ()

    def set(self) -> None:
        pass


_NO_EVENT = _NoEvent()
_INTERNAL_ERROR = object()
"""What :meth:`lean_answer` hands its task when the app raised: uvicorn's 500 answer."""
_DEFAULTS: list[Any] = [None, b""]
"""uvicorn's default headers last seen (a list it replaces when they change) and their lines."""
_JSON_LENGTH_HEAD = json_header_lines(0)[: -len(b"0\r\n")]
"""``json_header_lines`` up to the length's digits."""
_JSON_HEADS: dict[int, bytes] = {}
"""A JSON answer's head up to its length's digits, per status, for the default headers last seen."""


class LeanCycle:
    """One request on the lean path: its body, and the ASGI ``receive``/``send`` the app is given.

    Has the attributes uvicorn's protocol and the connection guard read on a cycle
    (``response_complete``, ``more_body``, ``keep_alive``, ``disconnected``,
    ``message_event``).
    """

    __slots__ = (
        "protocol",
        "keep_alive",
        "more_body",
        "response_complete",
        "response_started",
        "disconnected",
        "message_event",
        "body",
        "started",
        "head",
    )

    def __init__(self, protocol: Any, keep_alive: bool) -> None:
        self.protocol = protocol
        self.keep_alive = keep_alive
        self.more_body = True
        self.response_complete = False
        self.response_started = False
        self.disconnected = False
        self.message_event = _NO_EVENT
        self.body: bytes | bytearray = b""
        """The body so far: the parser's one piece as it is, more pieces gathered in a bytearray."""
        self.started = False
        self.head = b""

    async def receive(self) -> dict[str, Any]:
        """The whole body at once (the app starts when it is in); a disconnect once the client left."""
        if self.disconnected or self.response_complete:
            return {"type": "http.disconnect"}
        body, self.body = bytes(self.body), b""
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(self, message: dict[str, Any]) -> None:
        """The response: the head is held until the body's first write, and both leave as one."""
        protocol = self.protocol
        if protocol.flow.write_paused and not self.disconnected:
            await protocol.flow.drain()
        if self.disconnected or self.response_complete:
            return
        if not self.response_started:
            if message["type"] != "http.response.start":
                raise RuntimeError(f"expected 'http.response.start', got {message['type']!r}")
            self.head = self.start(message["status"], message.get("headers", ()))
            return
        if message["type"] != "http.response.body":
            raise RuntimeError(f"expected 'http.response.body', got {message['type']!r}")
        data = message.get("body", b"")
        if self.head:
            data, self.head = self.head + data, b""
        if data:
            protocol.lean_turn.write_now(protocol.transport, data)
        if not message.get("more_body", False):
            self.complete()

    def start(self, status: int, headers: Any) -> bytes:
        """The response head: uvicorn's status line and default headers, the app's, and
        ``connection: close`` when the request ends the connection, as one does whose answer
        starts before its body is in (a 413 from ``Content-Length``, or past the limit): the rest
        of the body is never parsed (:func:`~agentenv.retrieval.connections.linger`), where a
        connection kept alive read it as the next request's head (a spurious 431)."""
        self.response_started = True
        if self.more_body:
            self.keep_alive = False
        parts = [_STATUS_LINE[status]]
        for name, value in self.protocol.server_state.default_headers:
            parts += (name, b": ", value, b"\r\n")
        said_close = False
        for name, value in headers:
            parts += (name, b": ", value, b"\r\n")
            if name == b"connection" and b"close" in value.lower():
                self.keep_alive, said_close = False, True
        if not self.keep_alive and not said_close:
            parts.append(b"connection: close\r\n")
        parts.append(b"\r\n")
        return b"".join(parts)

    def answer_whole(self, status: int, headers: Any, body: bytes) -> None:
        """The whole response in one write, as :meth:`send` writes a start and one body."""
        protocol = self.protocol
        protocol.lean_turn.write_now(protocol.transport, self.start(status, headers) + body)
        self.complete()

    def answer_json(self, status: int, body: bytes) -> None:
        """``answer_whole(status, answer_headers(body, []), body)`` on a connection kept alive,
        with uvicorn's default headers joined once per change (its date, every tick) rather than
        per request; the bytes leave with the other answers of this turn of the loop
        (:mod:`~agentenv.integrations.serve_env.turn_batch`)."""
        protocol = self.protocol
        defaults = protocol.server_state.default_headers
        if defaults is not _DEFAULTS[0]:
            _DEFAULTS[:] = [defaults, b"".join(n + b": " + v + b"\r\n" for n, v in defaults)]
            _JSON_HEADS.clear()
        head = _JSON_HEADS.get(status)
        if head is None:  # all of the head but the length, once per status and date
            head = _JSON_HEADS[status] = _STATUS_LINE[status] + _DEFAULTS[1] + _JSON_LENGTH_HEAD
        self.response_started = True
        protocol.lean_turn.queue(protocol.transport, b"%s%d\r\n\r\n%s" % (head, len(body), body))
        self.complete()

    def complete(self) -> None:
        protocol = self.protocol
        self.response_complete = True
        if protocol.lean_cycle is self:
            protocol.lean_cycle = None
        if not self.keep_alive:
            if self.more_body:  # answered before its body was in (start)
                linger(protocol.transport)
            else:
                protocol.transport.close()
        protocol.on_response_complete()


def _status_lines() -> dict[int, bytes]:
    from uvicorn.protocols.http.httptools_impl import STATUS_LINE

    return STATUS_LINE


_STATUS_LINE: dict[int, bytes] = {}


def lean_protocol(
    base: type,
    app: Any,
    hot_paths: tuple[str, ...],
    *,
    max_body_bytes: int,
    max_header_bytes: int,
) -> type:
    """``base`` (a guarded httptools protocol) with ``POST`` to ``hot_paths`` on the lean cycle.

    A base on h11 (httptools missing) is returned as it is.
    """
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # httptools missing: uvicorn (and the guard) run on h11
        return base
    if not issubclass(base, HttpToolsProtocol) or not hasattr(base, "guard_send_error"):
        return base
    if not _STATUS_LINE:
        _STATUS_LINE.update(_status_lines())
    hot = frozenset(path.encode() for path in hot_paths)
    max_length_digits = len(str(max_body_bytes))
    # An app that answers a whole body directly (a verl-tool app: its one hot path).
    observe_body = getattr(app, "observe_body", None)
    send_answer = getattr(app, "send_answer", None)
    if send_answer is None or hot != {b"/get_observation"}:
        observe_body = None

    class LeanProtocol(base):  # type: ignore[valid-type, misc]
        lean_cycle: LeanCycle | None = None
        lean_ready: LeanCycle | None = None
        """A request whose body is whole, answered at the end of this ``data_received``."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.lean_turn = turn_of(self.loop)
            """The loop's :class:`~.turn_batch.TurnBatch`, looked up once per connection."""

        def on_message_begin(self) -> None:
            self.url = b""
            self.expect_100_continue = False
            self.headers = []
            self.scope = None  # built for uvicorn's cycle only (on_headers_complete)

        def on_headers_complete(self) -> None:
            parser = self.parser
            cycle = self.cycle
            if (
                self.url not in hot
                or parser.get_method() != b"POST"
                or parser.should_upgrade()
                or not (cycle is None or cycle.response_complete)
            ):
                self.scope = {  # as uvicorn's on_message_begin builds it
                    "type": "http",
                    "asgi": {"version": self.asgi_version, "spec_version": "2.3"},
                    "http_version": "1.1",
                    "server": self.server,
                    "client": self.client,
                    "scheme": self.scheme,
                    "root_path": self.root_path,
                    "headers": self.headers,
                    "state": self.app_state.copy(),
                }
                super().on_headers_complete()
                return
            if self.guard_header_bytes > max_header_bytes:
                self.lean_headers_checked()
            # uvicorn keeps HTTP/1.0 connections alive by no header; only a header can keep
            # one alive for the parser, so the version (a string built per call) is read then.
            keep_alive = parser.should_keep_alive()
            refused_at_once = False
            for name, value in self.headers:
                if name == b"content-length":
                    refused_at_once = not value.isdigit() or (
                        len(value.lstrip(b"0")) > max_length_digits or int(value) > max_body_bytes
                    )
                elif keep_alive and (name == b"connection" or name == b"proxy-connection"):
                    keep_alive = parser.get_http_version() != "1.0"
            cycle = self.cycle = self.lean_cycle = LeanCycle(self, keep_alive)
            if refused_at_once:
                self.lean_start(cycle)  # the app refuses it from the header, as on uvicorn's path
            elif self.expect_100_continue:
                self.lean_turn.write_now(self.transport, _CONTINUE)

        def lean_headers_checked(self) -> None:
            """The guard's header-size check (its ``on_headers_complete`` is not called here)."""
            if self.guard_header_bytes > max_header_bytes:
                size = len(self.url) + sum(len(n) + len(v) + 4 for n, v in self.headers)
                if size > max_header_bytes:
                    self.guard_too_large = True
                    raise ValueError("request headers too large")  # httptools: parser error

        def on_body(self, body: bytes) -> None:
            cycle = self.cycle
            if not isinstance(cycle, LeanCycle):
                super().on_body(body)
                return
            if cycle.started or cycle.response_complete:
                return
            gathered = cycle.body
            if not gathered:
                cycle.body = gathered = body  # the usual body: one piece, not copied
            elif type(gathered) is bytes:
                cycle.body = gathered = bytearray(gathered)
                gathered += body
            else:
                gathered += body
            if len(gathered) > max_body_bytes:
                self.lean_start(cycle)  # the app answers 413 from the size

        def on_message_complete(self) -> None:
            cycle = self.cycle
            if not isinstance(cycle, LeanCycle):
                super().on_message_complete()
                return
            cycle.more_body = False
            if not cycle.started and not cycle.response_complete:
                if observe_body is None:
                    self.lean_start(cycle)
                else:  # answered once the guard has seen the request in (data_received)
                    cycle.started = True
                    self.lean_ready = cycle

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            cycle = self.lean_ready
            if cycle is not None:
                self.lean_ready = None
                if not cycle.response_complete and not self.transport.is_closing():
                    # answered with the other requests this turn of the loop read (turn_batch.py)
                    self.lean_turn.answer_soon(lambda: self.lean_answer_ready(cycle))

        def lean_answer_ready(self, cycle: LeanCycle) -> None:
            """:meth:`lean_answer`, unless the client left or the connection closed meanwhile."""
            if cycle.response_complete or cycle.disconnected or self.transport.is_closing():
                return
            try:
                self.lean_answer(cycle)
            except Exception:  # noqa: BLE001 - a bug here closes this connection, not the server
                logger.exception("answering a request on the lean cycle failed")
                self.transport.close()

        def lean_answer(self, cycle: LeanCycle) -> None:
            """A whole body within the limit: the app's answer, written here when it is ready at
            once (no task, no ASGI messages), else sent by a task as :meth:`lean_run` sends."""
            try:
                answer = observe_body(bytes(cycle.body), self.client)
            except Exception as exc:  # noqa: BLE001 - as lean_run: log, answer 500
                answer = self.lean_failed(exc)
            cycle.body = b""
            if type(answer) is tuple and type(answer[1]) is bytes and not self.flow.write_paused:
                status, body, extra = answer
                if extra or not cycle.keep_alive:
                    cycle.answer_whole(status, answer_headers(body, extra), body)
                else:
                    cycle.answer_json(status, body)
                return
            task = self.loop.create_task(self.lean_send(cycle, answer))
            task.add_done_callback(self.tasks.discard)
            self.tasks.add(task)

        def lean_failed(self, exc: BaseException) -> Any:
            logger.error("exception in the env server's app", exc_info=exc)
            return _INTERNAL_ERROR

        async def lean_send(self, cycle: LeanCycle, answer: Any) -> None:
            if answer is _INTERNAL_ERROR:
                await self.lean_internal_error(cycle)
                return
            try:
                if type(answer) is not tuple:
                    answer = await answer
                await send_answer(cycle.send, *answer)
            except BaseException as exc:  # noqa: BLE001 - as lean_run
                logger.error("exception in the env server's app", exc_info=exc)
                await self.lean_internal_error(cycle)

        def lean_start(self, cycle: LeanCycle) -> None:
            """Run the app on ``cycle`` in a task, with the scope of *this* request: taken now,
            since a request pipelined behind it replaces ``url`` and ``headers`` before the task
            runs (a 413 was answered as the next request's ``GET /health``, a 405)."""
            cycle.started = True
            scope = {
                "type": "http",
                "http_version": "1.1",
                "method": "POST",
                "path": self.url.decode("ascii"),
                "headers": self.headers,
                "client": self.client,
            }
            task = self.loop.create_task(self.lean_run(cycle, scope))
            task.add_done_callback(self.tasks.discard)
            self.tasks.add(task)

        async def lean_run(self, cycle: LeanCycle, scope: dict[str, Any]) -> None:
            try:
                await app(scope, cycle.receive, cycle.send)
            except BaseException as exc:  # noqa: BLE001 - as uvicorn's run_asgi: log, answer 500
                logger.error("exception in the env server's app", exc_info=exc)
                await self.lean_internal_error(cycle)
            else:
                if not cycle.response_complete and not cycle.disconnected:
                    logger.error("the env server's app returned without completing its response")
                    self.transport.close()

        async def lean_internal_error(self, cycle: LeanCycle) -> None:
            """uvicorn's 500 answer, or the connection closed when the response had started."""
            if not cycle.response_started:
                await cycle.send(
                    {
                        "type": "http.response.start",
                        "status": 500,
                        "headers": [
                            (b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", b"21"),
                            (b"connection", b"close"),
                        ],
                    }
                )
                await cycle.send({"type": "http.response.body", "body": b"Internal Server Error"})
            else:
                self.transport.close()

        def on_response_complete(self) -> None:
            """uvicorn's, without its keep-alive timer after a lean cycle: the connection guard's
            idle deadline (``idle_timeout_s``, which uvicorn's ``timeout_keep_alive`` rounds) closes
            a connection left idle. Why: arming and cancelling a timer each request cost ~8 µs of
            CPU a request, a third of the rest of this layer (``benchmarks/http_floor.py``)."""
            if type(self.cycle) is not LeanCycle or self.pipeline:
                super().on_response_complete()
                return
            self.server_state.total_requests += 1
            if self.transport.is_closing():
                return
            self._unset_keepalive_if_required()  # one armed after an answer of uvicorn's cycle
            self.flow.resume_reading()
            self.guard_response_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            lean = self.lean_cycle
            if lean is not None and not lean.response_complete:
                lean.disconnected = True
            super().connection_lost(exc)

        def shutdown(self) -> None:
            turn = self.lean_turn
            if turn.holds(self.transport):  # its answer leaves before uvicorn closes it
                turn.flush()
            lean = self.lean_cycle
            if lean is not None and not lean.response_complete:
                lean.keep_alive = False  # close once its answer is out
            super().shutdown()

    return LeanProtocol


def hot_paths(app: Any) -> tuple[str, ...]:
    """The hot paths of ``app`` (a verl-tool app's ``/get_observation``), or () for any other app."""
    routes = getattr(app, "routes", None)
    if isinstance(routes, dict) and routes.get("/get_observation", ("",))[0] == "POST":
        return ("/get_observation",)
    return ()


__all__ = ["LeanCycle", "hot_paths", "lean_protocol"]
