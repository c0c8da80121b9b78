"""Keep idle, slow and greedy connections from locking legitimate clients out.

uvicorn counts open connections against ``limit_concurrency`` and answers 503
once the count is reached, but it never times out a connection that has not
sent a request yet: a thousand sockets that connect and say nothing (or send
headers a byte at a time, "slowloris") hold the server at its limit for as
long as they like, and every env worker then gets 503s.

:class:`ConnectionGuard` tracks every connection's phase and enforces:

- a header deadline: a request's headers must be complete within
  ``header_timeout_s`` of the connection opening or of the request's first
  byte, and may not exceed ``max_header_bytes``;
- a keep-alive deadline: a connection with no request in flight is closed
  after ``idle_timeout_s``;
- a body deadline: a request body must arrive within ``body_timeout_s``
  once its headers are in;
- caps on open connections, in total and per client address. At a cap, the
  connection that has waited longest without a request in flight is closed
  to make room (first those that never completed a request, then idle
  keep-alive ones), so a new client is always served while any slot is only
  held by waiting. Only when every connection has a request in flight is
  the new one refused, with a 503.

Evicting the longest-waiting connection instead of refusing the newest is
what makes a per-address cap safe on loopback, where every client (env
workers and attackers alike) has the address 127.0.0.1: a worker's request
completes its headers in microseconds, so it is never the one waiting
longest. A legitimate keep-alive connection that is evicted while idle is
closed silently, and clients reopen it (``RetrievalClient`` does so without
spending a retry).

The checks cost a few dictionary operations per request; deadlines are
enforced by one sweep over the open connections a few times a second.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
from typing import Any

logger = logging.getLogger(__name__)

_UNPROVEN, _IDLE, _BUSY = 0, 1, 2
"""Phases: connected but no request completed yet; between requests; a request in flight."""


@dataclasses.dataclass
class ConnectionStats:
    """Counters shown by ``GET /info``; they show the guard at work."""

    open: int = 0
    opened: int = 0
    evicted: int = 0
    header_timeouts: int = 0
    idle_timeouts: int = 0
    body_timeouts: int = 0
    headers_too_large: int = 0
    refused: int = 0


@dataclasses.dataclass(frozen=True)
class GuardSettings:
    """The guard's bounds (a view of ``ServerLimits``, so this module needs no server)."""

    max_connections: int = 1024
    max_connections_per_client: int = 512
    header_timeout_s: float = 5.0
    idle_timeout_s: float = 60.0
    body_timeout_s: float = 10.0
    max_header_bytes: int = 32768


class _Slots:
    """Connections without a request in flight, oldest waiting first.

    Two insertion-ordered dicts: the oldest entry is the one that has waited
    longest, because a connection is (re)inserted when it starts waiting.
    """

    __slots__ = ("unproven", "idle", "count")

    def __init__(self) -> None:
        self.unproven: dict[Any, None] = {}
        self.idle: dict[Any, None] = {}
        self.count = 0

    def longest_waiting(self) -> Any | None:
        for waiting in (self.unproven, self.idle):
            if waiting:
                return next(iter(waiting))
        return None


class ConnectionGuard:
    """Open connections of one server process, their phases, and the sweep that times them out.

    Protocol objects (see :func:`guarded_protocol`) call ``admit`` when they
    connect, ``busy``/``idle`` on request boundaries and ``release`` when
    they close; everything runs on the server's event loop.
    """

    def __init__(self, settings: GuardSettings) -> None:
        self.settings = settings
        self.stats = ConnectionStats()
        self._all = _Slots()
        self._clients: dict[str, _Slots] = {}
        self._open: dict[Any, None] = {}
        self._sweeper: asyncio.TimerHandle | None = None
        shortest = min(settings.header_timeout_s, settings.idle_timeout_s, settings.body_timeout_s)
        self._sweep_every_s = min(max(shortest / 4, 0.05), 0.5)

    def only_client(self, client: str) -> bool:
        """Whether every open connection is ``client``'s (one at least): no other client has one
        on which a request could be waiting to be read."""
        clients = self._clients
        return len(clients) == 1 and client in clients

    # -- bookkeeping called by the protocol ------------------------------------

    def admit(self, conn: Any, loop: asyncio.AbstractEventLoop) -> bool:
        """Register a new connection, evicting waiting ones at a cap; False: refuse it."""
        if self._sweeper is None:
            self._sweeper = loop.call_later(self._sweep_every_s, self._sweep, loop)
        client = self._clients.get(conn.guard_client)
        if client is None:
            client = self._clients[conn.guard_client] = _Slots()
        for slots, cap in (
            (client, self.settings.max_connections_per_client),
            (self._all, self.settings.max_connections),
        ):
            while slots.count >= cap:
                victim = slots.longest_waiting()
                if victim is None:
                    self.stats.refused += 1
                    if not client.count:
                        del self._clients[conn.guard_client]
                    return False
                self.stats.evicted += 1
                self._close(victim, None)
        conn.guard_phase = _UNPROVEN
        conn.guard_deadline = loop.time() + self.settings.header_timeout_s
        self._open[conn] = None
        for slots in (client, self._all):
            slots.count += 1
            slots.unproven[conn] = None
        self.stats.opened += 1
        self.stats.open = len(self._open)
        return True

    def busy(self, conn: Any, now: float) -> None:
        """Headers are in: the connection has a request in flight and cannot be evicted."""
        if conn not in self._open:
            return  # already closed by the guard
        client, every = self._clients[conn.guard_client], self._all
        if conn.guard_phase == _UNPROVEN:
            client.unproven.pop(conn, None)
            every.unproven.pop(conn, None)
        else:  # written out, not looped: this runs on every request
            client.idle.pop(conn, None)
            every.idle.pop(conn, None)
        conn.guard_phase = _BUSY
        conn.guard_deadline = now + self.settings.body_timeout_s

    def idle(self, conn: Any, now: float) -> None:
        """The response went out: the connection waits for its next request."""
        if conn not in self._open:
            return
        conn.guard_phase = _IDLE
        conn.guard_deadline = now + self.settings.idle_timeout_s
        self._clients[conn.guard_client].idle[conn] = None
        self._all.idle[conn] = None

    def release(self, conn: Any) -> None:
        """Forget a closed connection (safe to call more than once)."""
        if self._open.pop(conn, False) is False:
            return  # already released, or never admitted
        client = self._clients[conn.guard_client]
        for slots in (client, self._all):
            slots.unproven.pop(conn, None)
            slots.idle.pop(conn, None)
            slots.count -= 1
        if not client.count:
            del self._clients[conn.guard_client]
        self.stats.open = len(self._open)

    # -- deadlines -------------------------------------------------------------

    def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        now = loop.time()
        expired = [conn for conn in self._open if conn.guard_deadline < now]
        for conn in expired:
            if conn.guard_phase == _BUSY:
                if not conn.reading_body():
                    continue  # the server is working on it: not the client's delay
                self.stats.body_timeouts += 1
                self._close(
                    conn,
                    (408, f"request body not received within {self.settings.body_timeout_s:g} s"),
                )
            elif conn.guard_started:
                self.stats.header_timeouts += 1
                self._close(
                    conn,
                    (
                        408,
                        f"request headers not received within {self.settings.header_timeout_s:g} s",
                    ),
                )
            elif conn.guard_phase == _UNPROVEN:
                self.stats.header_timeouts += 1
                self._close(conn, None)
            else:
                self.stats.idle_timeouts += 1
                self._close(conn, None)
        self._sweeper = loop.call_later(self._sweep_every_s, self._sweep, loop)

    def _close(self, conn: Any, answer: tuple[int, str] | None) -> None:
        """Close ``conn`` now, first answering ``(status, reason)`` if it sent part of a request.

        A connection that sent nothing is closed silently: a keep-alive client
        would otherwise read the stale answer as the reply to its next request.
        """
        self.release(conn)
        if answer is not None:
            conn.guard_send_error(*answer)
        conn.transport.close()


def error_response(status: int, reason: str, *, retry_after_s: int | None = None) -> bytes:
    """A complete ``Connection: close`` HTTP/1.1 response with a JSON ``{"error": reason}`` body."""
    phrases = {
        400: "Bad Request",
        408: "Request Timeout",
        431: "Request Header Fields Too Large",
        503: "Service Unavailable",
    }
    body = json.dumps({"error": reason}).encode()
    head = (
        f"HTTP/1.1 {status} {phrases.get(status, 'Error')}\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n"
    )
    if retry_after_s is not None:
        head += f"retry-after: {retry_after_s}\r\n"
    return head.encode() + b"\r\n" + body


def guarded_protocol(guard: ConnectionGuard, retry_after_s: int = 1) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol class (httptools if installed, else h11) reporting to ``guard``.

    The subclass hooks the methods both of uvicorn's implementations share
    (``connection_made``, ``data_received``, ``on_response_complete``,
    ``connection_lost``, ``send_400_response``) and reads their ``cycle``
    (the request in flight), so it works with either; ``on_headers_complete``
    is httptools' alone.
    """
    feed: type = _IgnoredUpgrades
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as base
    except ImportError:  # pragma: no cover - httptools is optional
        from uvicorn.protocols.http.h11_impl import H11Protocol as base  # type: ignore[assignment]

        feed = _UvicornFeed

    max_header_bytes = guard.settings.max_header_bytes

    class GuardedProtocol(feed, base):  # type: ignore[valid-type, misc]
        guard_client: str = ""
        guard_phase: int = _UNPROVEN
        guard_deadline: float = 0.0
        guard_started = False
        """Bytes of the next request have arrived, but not all its headers."""
        guard_header_bytes = 0
        guard_too_large = False

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.guard_client = self.client[0] if self.client else ""
            if not guard.admit(self, self.loop):
                self.connections.discard(self)
                transport.write(
                    error_response(
                        503,
                        "server at its connection limit with every connection busy; retry "
                        f"after {retry_after_s} s",
                        retry_after_s=retry_after_s,
                    )
                )
                transport.close()

        def connection_lost(self, exc: Exception | None) -> None:
            guard.release(self)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self.guard_phase == _BUSY:
                self.guard_feed(data)
                return
            if not self.guard_started:
                self.guard_started = True
                if self.guard_phase == _IDLE:  # the header clock starts with the first byte
                    self.guard_deadline = self.loop.time() + guard.settings.header_timeout_s
            self.guard_header_bytes += len(data)
            self.guard_feed(data)
            if self.transport.is_closing():
                return
            cycle = self.cycle
            if cycle is not None and not cycle.response_complete:
                self.guard_started = False
                self.guard_header_bytes = 0
                guard.busy(self, self.loop.time())
            elif self.guard_header_bytes > max_header_bytes:
                guard.stats.headers_too_large += 1
                guard.release(self)
                self.guard_send_error(431, f"request headers exceed {max_header_bytes} bytes")
                self.transport.close()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self.guard_response_complete()

        def guard_response_complete(self) -> None:
            """The connection waits for its next request (the guard's idle deadline runs)."""
            cycle = self.cycle
            if (
                self.guard_phase == _BUSY
                and (cycle is None or cycle.response_complete)
                and not self.transport.is_closing()
            ):
                guard.idle(self, self.loop.time())

        def on_headers_complete(self) -> None:
            # httptools only (h11 enforces h11_max_incomplete_event_size itself). Headers
            # that arrived whole in one read slip past data_received's running count, so
            # measure them, but only when that count says they might be too large.
            if self.guard_header_bytes > max_header_bytes:
                size = len(getattr(self, "url", b"")) + sum(
                    len(name) + len(value) + 4 for name, value in self.headers
                )
                if size > max_header_bytes:
                    self.guard_too_large = True
                    raise ValueError("request headers too large")  # httptools: parser error
            previous = self.cycle
            super().on_headers_complete()
            cycle = self.cycle
            if cycle is not previous:  # none is made for an upgrade (guard_stopped)
                cycle.transport = _OneWrite(self.transport, cycle)

        def reading_body(self) -> bool:
            """Whether the request in flight still waits for body bytes from the client."""
            cycle = self.cycle
            return bool(cycle is not None and cycle.more_body and not cycle.response_complete)

        def send_400_response(self, msg: str) -> None:
            """uvicorn's answer to bytes that are not HTTP, as JSON like every other error."""
            guard.release(self)
            if self.guard_too_large:
                guard.stats.headers_too_large += 1
                self.guard_send_error(431, f"request headers exceed {max_header_bytes} bytes")
            else:
                self.guard_send_error(400, f"malformed HTTP request: {msg}")
            self.transport.close()

        def guard_send_error(self, status: int, reason: str) -> None:
            if not self.transport.is_closing():
                self.transport.write(error_response(status, reason))

    return GuardedProtocol


class _UvicornFeed:
    """h11: what the client sends goes to uvicorn's ``data_received`` as it is."""

    def guard_feed(self, data: bytes) -> None:
        super().data_received(data)  # type: ignore[misc]


class _IgnoredUpgrades:
    """httptools: an upgrade the server does not perform is ignored, as RFC 9110 (7.8) lets a
    server do, and the request is served as if it had no ``Upgrade`` header.

    Why: llhttp stops at the end of the head of a request with ``Upgrade`` and ``Connection:
    upgrade`` (``Upgrade: h2c`` on a ``POST``, say) and leaves its body unread, for the protocol it
    would switch to; uvicorn then served the request with an empty body (a 400 where the same
    request without the header got its answer). Here uvicorn starts no cycle for such a request
    (:meth:`_should_upgrade`), and once the parser has stopped, the head is parsed again without
    the header, then the rest of the bytes. :meth:`guard_feed` replaces uvicorn's
    ``data_received`` line for line, so a request without an upgrade costs what it cost.
    """

    parser: Any
    scope: Any
    url: bytes
    headers: list[tuple[bytes, bytes]]
    logger: logging.Logger

    def guard_feed(self, data: bytes) -> None:
        """uvicorn's httptools ``data_received``, with :meth:`guard_stopped` after an upgrade."""
        self._unset_keepalive_if_required()  # type: ignore[attr-defined]
        try:
            self.parser.feed_data(data)
        except Exception as err:  # noqa: BLE001 - told apart in guard_stopped, off the hot path
            self.guard_stopped(err, data)

    def guard_stopped(self, err: Exception, data: bytes | memoryview) -> None:
        """The parser stopped in ``data``: uvicorn's 400 for bytes that are not HTTP; after an
        upgrade request's head, that request served, or read again as plain HTTP."""
        import httptools  # imported already, by uvicorn's protocol

        while isinstance(err, httptools.HttpParserUpgrade):
            data = memoryview(data)[err.args[0] :]  # what followed the head
            if self.guard_performs_upgrade():
                self.handle_websocket_upgrade()  # type: ignore[attr-defined]
                return
            if not self._should_upgrade():  # a CONNECT: uvicorn's cycle answers it
                self._unsupported_upgrade_warning()  # type: ignore[attr-defined]
                return
            # The head without its Upgrade header, to a new parser: this one has ended the
            # message, and one that does not keep the connection (``Connection: close``,
            # HTTP/1.0) would drop what follows unread (uvicorn's ``lenient_data_after_close``).
            self.parser = _new_parser(self, httptools)
            try:  # the parser does not stop at the end of this head
                self.parser.feed_data(self.guard_plain_head())
            except httptools.HttpParserError as refused:
                err = refused
                break
            try:
                self.parser.feed_data(data)
                return
            except Exception as again:  # noqa: BLE001 - the loop tells them apart
                err = again  # a pipelined request with an upgrade too, or bytes that are not HTTP
        if not isinstance(err, httptools.HttpParserError):
            raise err
        msg = "Invalid HTTP request received."
        self.logger.warning(msg)
        self.send_400_response(msg)  # type: ignore[attr-defined]

    def _should_upgrade(self) -> bool:
        """Whether uvicorn starts no cycle for a request the parser stops at as an upgrade (uvicorn
        asks only then): any but a ``CONNECT``, which :meth:`guard_stopped` performs or reads again
        without its ``Upgrade`` header. Not uvicorn's reading of the headers, which takes the last
        ``Connection`` header only: with ``Connection: upgrade`` and ``Connection: keep-alive``
        the parser stopped at the head and uvicorn started a cycle on an empty body, and a body
        that arrived later was parsed as a request of its own."""
        return bool(self.scope["method"] != "CONNECT")

    def guard_performs_upgrade(self) -> bool:
        """uvicorn's test (a WebSocket upgrade, on a server with WebSockets), for a ``GET`` only:
        RFC 6455 opens a WebSocket with a ``GET``; another method is served as plain HTTP."""
        performs = super()._should_upgrade  # type: ignore[misc]
        return self.scope["method"] == "GET" and bool(performs())

    def guard_plain_head(self) -> bytes:
        """The request's head as it was parsed, without its ``Upgrade`` header."""
        method, version = self.scope["method"].encode(), self.scope["http_version"].encode()
        lines = [b"%s %s HTTP/%s\r\n" % (method, self.url, version)]
        lines += [b"%s: %s\r\n" % header for header in self.headers if header[0] != b"upgrade"]
        lines.append(b"\r\n")
        return b"".join(lines)


def _new_parser(protocol: Any, httptools: Any) -> Any:
    """A parser for ``protocol`` as uvicorn makes one (its leniency for data after a close too)."""
    parser = httptools.HttpRequestParser(protocol)
    with contextlib.suppress(AttributeError):  # httptools < 0.6.3 has no leniencies
        parser.set_dangerous_leniencies(lenient_data_after_close=True)
    return parser


def _closing(head: bytes, cycle: Any) -> bytes:
    """``head`` saying ``connection: close``, and ``cycle`` ending its connection once answered."""
    cycle.keep_alive = False  # uvicorn closes the connection (_OneWrite.close) once answered
    return head[:-2] + b"connection: close\r\n\r\n"


LINGER_S = 2.0
"""How long a connection ended by an answer that left its request's body unread still reads (and
drops) what the client sends: enough for a client on loopback to send a body at the limits."""
LINGER_BYTES = 16 << 20
"""The most a lingering connection drops before it closes: a client that streams on (5 GB in the
2 s cost the server 1.5 s of CPU) is cut off; one that sends a body of up to 16 MiB first and
reads after still gets the answer."""


def linger(transport: Any, linger_s: float = LINGER_S) -> None:
    """End a connection whose answer left its request's body unread, in stages (RFC 9112, 9.6).

    Why: kept alive, the rest of the body (sent after a 413 by ``Content-Length``, or a refusal by
    path) was parsed as the next request's head: a spurious 431, or garbage. Closed at once, with
    body bytes unread or still coming, the kernel resets the connection, and a client still
    sending its body (``http.client``, httpx) gets the reset instead of the answer. So the answer
    (which says ``connection: close``) is followed by the end of the stream; what the client
    sends next is read and dropped, never parsed; the connection closes when the client closes
    it, or after ``linger_s``.
    """
    if transport.is_closing():
        return
    if not transport.can_write_eof():  # pragma: no cover - TCP transports can
        transport.close()
        return
    transport.write_eof()  # once the answer is out
    transport.set_protocol(_Lingering(transport.get_protocol(), transport, linger_s))
    transport.resume_reading()


class _Lingering(asyncio.Protocol):
    """A connection's protocol once it has answered its last request: what arrives is dropped."""

    def __init__(self, protocol: Any, transport: Any, linger_s: float) -> None:
        self.protocol = protocol
        self.transport = transport
        self.dropped = 0
        self.closer = protocol.loop.call_later(linger_s, transport.close)

    def data_received(self, data: bytes) -> None:
        self.dropped += len(data)  # the rest of a body nobody reads
        if self.dropped > LINGER_BYTES:
            self.transport.close()

    def eof_received(self) -> bool:
        return False  # the client is done: the transport closes

    def connection_lost(self, exc: Exception | None) -> None:
        self.closer.cancel()
        self.protocol.connection_lost(exc)  # the guard and uvicorn forget the connection


class _OneWrite:
    """A response cycle's view of the transport: its head waits for the body, then one write.

    uvicorn writes a response's status line and headers, then its body, as two
    ``transport.write`` calls: two ``send`` syscalls, and on loopback two
    wake-ups of the client, which reads the head, finds the body missing and
    waits again. Holding the head until the body's first write sends both in
    one segment. Every ASGI body message reaches ``write`` (an empty one too),
    except a HEAD's, which uvicorn does not write: a HEAD's head leaves at once.
    ``close`` flushes a held head, so nothing is held past the response.
    """

    __slots__ = ("transport", "cycle", "head", "state")

    def __init__(self, transport: Any, cycle: Any) -> None:
        self.transport = transport
        self.cycle = cycle
        self.head = b""
        self.state = 0  # 0: head not written yet; 1: head held; 2: passing writes through

    def write(self, data: bytes) -> None:
        if self.state == 0:
            if self.cycle.response_started:  # the first write once started is the head
                # Answered before its body is in: the connection ends (close). getattr: a
                # cycle is otherwise only asked for response_started and scope here.
                if getattr(self.cycle, "more_body", False) and self.cycle.keep_alive:
                    data = _closing(data, self.cycle)
                if self.cycle.scope["method"] == "HEAD":  # no body write will follow it
                    self.state = 2
                    self.transport.write(data)
                    return
                self.head = data
                self.state = 1
                return
        elif self.state == 1:
            data = self.head + data
            self.head = b""
            self.state = 2
        self.transport.write(data)

    def flush(self) -> None:
        if self.state == 1:
            self.state = 2
            self.transport.write(self.head)
            self.head = b""

    def close(self) -> None:
        self.flush()
        if getattr(self.cycle, "more_body", False):  # the body is still coming: not read
            linger(self.transport)
        else:
            self.transport.close()

    def is_closing(self) -> bool:
        return bool(self.transport.is_closing())

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)
