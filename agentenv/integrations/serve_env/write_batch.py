"""Lean answers written together once the event loop's ready callbacks have run, not one by one.

Why: with one trajectory a request, the server answers each request inside the
``data_received`` that completed it, and every answer was a ``send`` system call
right after that request's env step. On a small virtual machine a system call
that wakes the client costs tens of µs, and each one left the next env step to
run on cold caches: MediaSearch's steps cost about twice as much in the server
as in an in-process loop. Queued here, the answers of every request read in one
turn of the loop leave together after the last of them, so that turn's steps run
back to back: serve-env's CPU per one-a-request MediaSearch episode went from
482-508 to 395-414 µs (``benchmarks/serve_env_load.py``, the same run; p99
latency 19.6-21.1 -> 10.2-13.8 ms).

The order of bytes on a connection is kept: a connection's queued answers leave
in the order queued, and any other write to it (:func:`write_now`) first sends
what is queued. A connection closed meanwhile gets nothing.

Example:
    >>> import asyncio
    >>> class Transport:
    ...     def __init__(self): self.sent = []
    ...     def write(self, data): self.sent.append(data)
    ...     def is_closing(self): return False
    >>> async def two_answers():
    ...     a, b = Transport(), Transport()
    ...     queue(a, b"1"); queue(b, b"2"); queue(a, b"3")
    ...     queued_then = (list(a.sent), list(b.sent))
    ...     write_now(b, b"4")  # b's queued answer leaves first
    ...     await asyncio.sleep(0)
    ...     return queued_then, a.sent, b.sent
    >>> asyncio.run(two_answers())
    (([], []), [b'1', b'3'], [b'2', b'4'])
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any


class WriteBatch:
    """One event loop's queued answers, sent by one callback scheduled with the first of them."""

    __slots__ = ("_loop", "_queued", "_transports")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._queued: list[tuple[Any, bytes]] = []
        self._transports: set[int] = set()

    def queue(self, transport: Any, data: bytes) -> None:
        """Send ``data`` on ``transport`` once the loop's ready callbacks have run."""
        if not self._queued:
            self._loop.call_soon(self.flush)
        self._queued.append((transport, data))
        self._transports.add(id(transport))

    def holds(self, transport: Any) -> bool:
        """Whether ``transport`` has queued data."""
        return id(transport) in self._transports

    def flush(self) -> None:
        """Send everything queued, in order (a closing transport's data is dropped)."""
        queued, self._queued = self._queued, []
        self._transports.clear()
        for transport, data in queued:
            if not transport.is_closing():
                transport.write(data)


_BATCHES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, WriteBatch] = (
    weakref.WeakKeyDictionary()
)


def batch_of(loop: asyncio.AbstractEventLoop) -> WriteBatch:
    """``loop``'s batch (made on first use)."""
    batch = _BATCHES.get(loop)
    if batch is None:
        batch = _BATCHES[loop] = WriteBatch(loop)
    return batch


def queue(transport: Any, data: bytes) -> None:
    """Queue ``data`` for ``transport`` in the running loop's batch (see the module docstring)."""
    batch_of(asyncio.get_running_loop()).queue(transport, data)


def write_now(transport: Any, data: bytes, loop: asyncio.AbstractEventLoop | None = None) -> None:
    """Write ``data`` on ``transport`` at once, after whatever the batch holds for it."""
    batch = _BATCHES.get(loop or asyncio.get_running_loop())
    if batch is not None and batch.holds(transport):
        batch.flush()
    transport.write(data)
