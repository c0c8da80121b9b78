"""The requests one turn of the event loop reads, answered together after the reads, and their answers written together after that.

Why: with one trajectory a request, the server answered each request inside the
``data_received`` that read it and sent the answer at once, so every env step
sat between two system calls (the ``recv`` that read it, the ``send`` that
answered it). On a small virtual machine each of those costs tens of µs and
leaves the next env step to run on cold caches: MediaSearch's steps cost about
1.4-2x as much in the server as in an in-process loop. Now a request whose body
is whole is queued (:func:`answer_soon`), and once the loop has run every read
of its turn, one callback answers the queued requests back to back and then
sends their answers (:class:`WriteBatch`). serve-env's CPU per one-a-request
MediaSearch episode went 498 -> 415 µs with the writes batched and 409 -> 362
with the answers too (``benchmarks/serve_env_load.py --against``, each pair
in one run; p99 19.6 -> 14.1 ms with the first).

The order of bytes on a connection is kept: a connection's queued answers leave
in the order queued, and any other write to it (:func:`write_now`) first sends
what is queued. A connection closed meanwhile gets nothing, and a request whose
client left is not answered.

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
import logging
import weakref
from collections.abc import Callable
from typing import Any

logger = logging.getLogger("agentenv.serve_env")


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
_ANSWERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[Callable[[], None]]] = (
    weakref.WeakKeyDictionary()
)


def answer_soon(loop: asyncio.AbstractEventLoop, answer: Callable[[], None]) -> None:
    """Run ``answer`` once ``loop`` has run this turn's reads, with the turn's other answers,
    then send what they queued.

    Example:
        >>> import asyncio
        >>> async def turn():
        ...     loop, done = asyncio.get_running_loop(), []
        ...     answer_soon(loop, lambda: done.append("a"))
        ...     answer_soon(loop, lambda: done.append("b"))
        ...     queued = list(done)
        ...     await asyncio.sleep(0)
        ...     return queued, done
        >>> asyncio.run(turn())
        ([], ['a', 'b'])
    """
    waiting = _ANSWERS.get(loop)
    if waiting is None:
        waiting = _ANSWERS[loop] = []
    if not waiting:
        loop.call_soon(_answer_waiting, loop)
    waiting.append(answer)


def _answer_waiting(loop: asyncio.AbstractEventLoop) -> None:
    waiting = _ANSWERS.get(loop)
    if not waiting:
        return
    _ANSWERS[loop] = []
    for answer in waiting:
        try:
            answer()
        except Exception:  # one request's bug must not leave the others of its turn unanswered
            logger.exception("answering a request of this turn of the loop failed")
    batch = _BATCHES.get(loop)
    if batch is not None:
        batch.flush()


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
