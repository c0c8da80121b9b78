"""Work of ``serve-env`` scheduled per client: each client with work waiting gets one slice in turn.

Why: a request steps its trajectories in slices (a slice ends after
``YIELD_EVERY_S`` of steps, so it is at most one step past that), and between
slices it used to yield to whatever the event loop ran next. A client that keeps
many requests open at the limits (256 actions of 32 costly calls each) then had
a slice of *every* open request run before another client's one step: a legit
client's p50 went from 0.4 to 364 ms in one process. Here the slices are handed
out per client, round robin: a client's requests share one place in the round,
so another client's request waits for at most the slice in progress, about one
step's budget, however many requests the greedy client keeps open.

A client is the peer's IP address (:func:`client_of`): a greedy program opening
many connections from one host is one client.

* :class:`FairTurns`: the asyncio form, for the one-process server's event loop;
* :class:`ClientRounds`: the same order for a plain loop over generators (a
  worker process of the sharded server, :mod:`.shard_worker`).

OpenEnv's server steps each session's env in the session's own task, one step a
message; its steps take their turns through a :class:`FairTurns` too, one step a
slice, the client read from :data:`CLIENT`.

Example:
    >>> rounds = ClientRounds()
    >>> for job in ("a1", "a2", "a3"):
    ...     rounds.add("greedy", job)
    >>> rounds.add("legit", "b1")
    >>> [rounds.next()[1] for _ in range(2)]
    ['a1', 'b1']
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any, Generic, TypeVar

J = TypeVar("J")

LONG_SLICE_S = 0.004
"""A slice at least this long lets the loop turn :data:`LET_IN_TURNS` times before the same
client's next slice (:class:`FairTurns`); shorter ones (µs steps) pass on at once."""
LET_IN_TURNS = 8
"""Turns of the event loop from a request's bytes on the socket to its ``acquire``, with room."""

CLIENT: ContextVar[str] = ContextVar("agentenv_serve_env_client", default="?")
"""The client of the request or WebSocket session being served (set by the OpenEnv app's ASGI
wrapper, read by its environment's steps, which OpenEnv calls without the connection)."""


def client_of(scope: Mapping[str, Any]) -> str:
    """The client an ASGI request comes from: its peer's address (``"?"`` when the server gives none)."""
    peer = scope.get("client")
    return str(peer[0]) if peer else "?"


class FairTurns:
    """One slice of work runs at a time; slices are granted round robin over the clients waiting.

    A request calls :meth:`acquire` before its first slice, :meth:`pass_on` between
    slices and :meth:`release` when done (or failed). Within one client, slices run
    in the order asked. A slice asked for while nothing runs is granted on the next
    turn of the event loop, not at once, so that every request ready in this turn of
    the loop (OpenEnv's sessions, each stepping one action a slice) asks first and
    the grants go round robin over their clients rather than in arrival order.

    After a slice of :data:`LONG_SLICE_S` or more, the client that ran it does not get
    the next one at once when no other client waits: the loop first turns
    :data:`LET_IN_TURNS` times, so that a request of another client that arrived during
    the slice is read and asks first (it takes the loop a few turns to go from the
    socket to :meth:`acquire`); otherwise it waited for one more slice of the greedy
    client, two 10 ms steps instead of one.
    """

    def __init__(self, alone: Callable[[str], bool] | None = None) -> None:
        self.alone = alone
        """Whether a client is the only one with a connection open (the server's connection guard:
        :meth:`~agentenv.retrieval.connections.ConnectionGuard.only_client`); None: never assumed.
        :meth:`take_now` lets such a client go on after its long slice: no other client's request
        can be on its way."""
        self._waiting: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()
        self._busy = False
        self._dispatching = False
        self._started = 0.0
        """When the slice in progress was granted (``time.perf_counter``)."""
        self._after_long = False
        """The last slice released was long (and no slice has been granted since)."""
        self._last = ""
        """The client granted last: a client that starts waiting goes before its next slice."""
        self.granted = 0
        """Slices granted (a count for tests)."""

    @property
    def idle(self) -> bool:
        """No slice runs, is about to be granted, or waits."""
        return not (self._busy or self._dispatching or self._waiting)

    @property
    def waiting(self) -> int:
        """Slices waiting for their turn."""
        return sum(len(q) for q in self._waiting.values())

    def take_now(self, client: str) -> bool:
        """Take a slice at once, without a turn of the loop, when nothing runs, waits or is about
        to be granted (and ``client`` did not just run a long slice); False: :meth:`acquire` it.

        Why: a verl-tool request of one trajectory paid a turn of the event loop (a future, a
        scheduled callback, its task suspended and resumed) to take a slice nobody else wanted.
        Granting it at once keeps the bound :meth:`acquire` gives: a request of another client that
        asks meanwhile waits for this slice, as it would for any slice in progress. OpenEnv's
        sessions keep :meth:`acquire`, whose first grant goes round robin over a turn's askers.

        After a long slice, the client that ran it goes on at once when it is :attr:`alone`:
        refused, its request waited for the loop to turn, and every request read meanwhile queued
        behind it; each then waited for one grant a turn of the loop (a future, a task woken a
        turn later) while the next ones queued behind them, so under a steady closed loop of
        requests the queue never emptied, and a request cost ~60 µs of CPU more for as long as
        the load lasted (MediaSearch, one trajectory a request, 64 connections of one client,
        load 1.1-1.3: 647-685 µs of server CPU an episode answered at once, 840-862 queued).
        """
        if self._busy or self._dispatching or self._waiting:
            return False
        if self._after_long and client == self._last and not (self.alone and self.alone(client)):
            return False  # let the loop turn first (see the class), unless nobody else is connected
        self._busy = True
        self._last = client
        self._after_long = False
        self._started = time.perf_counter()
        self.granted += 1
        return True

    async def acquire(self, client: str) -> None:
        """Wait for this client's next turn."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        queue = self._waiting.get(client)
        if queue is None:
            queue = self._waiting[client] = deque()
            if self._last in self._waiting and self._last != client:
                self._waiting.move_to_end(self._last)  # it has just had its turn: after this one
        queue.append(future)
        if not self._busy and not self._dispatching:
            self._schedule()
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # granted, then cancelled before it ran: pass the turn on
            else:
                self._forget(client, future)
            raise

    async def pass_on(self, client: str) -> None:
        """End this slice: let every other client with work waiting run one, then continue."""
        long = time.perf_counter() - self._started >= LONG_SLICE_S
        if long or not self._waiting:
            # Let the loop read new requests and connections (after a long slice, until they ask).
            for _ in range(LET_IN_TURNS if long else 1):
                await asyncio.sleep(0)
            self._started = time.perf_counter()  # the loop has turned: release need not wait again
            if not self._waiting:
                return
        self.release()
        await self.acquire(client)

    def release(self) -> None:
        """End this request's slice (and its work, if it does not acquire again)."""
        self._busy = False
        self._after_long = time.perf_counter() - self._started >= LONG_SLICE_S
        if self._waiting and not self._dispatching:
            if self._after_long and list(self._waiting) == [self._last]:
                self._schedule()  # only the client that ran a long slice waits: see the class
            else:
                self._grant()

    def _schedule(self) -> None:
        """Grant on a later turn of the loop: the next, or after ``LET_IN_TURNS`` when only the
        client that has just run a long slice waits."""
        self._dispatching = True
        only_last = list(self._waiting) == [self._last]
        turns = LET_IN_TURNS if self._after_long and only_last else 1
        asyncio.get_running_loop().call_soon(self._dispatch_after, turns)

    def _dispatch_after(self, turns: int) -> None:
        if turns > 1:
            asyncio.get_running_loop().call_soon(self._dispatch_after, turns - 1)
        else:
            self._dispatch()

    def _dispatch(self) -> None:
        self._dispatching = False
        if not self._busy:
            self._grant()

    def _grant(self) -> None:
        while self._waiting:
            client, queue = next(iter(self._waiting.items()))
            future = queue.popleft()
            if queue:
                self._waiting.move_to_end(client)  # its next slice waits behind the others'
            else:
                del self._waiting[client]
            if not future.done():
                future.set_result(None)
                self._busy = True
                self._last = client
                self._after_long = False
                self._started = time.perf_counter()
                self.granted += 1
                return

    def _forget(self, client: str, future: asyncio.Future[None]) -> None:
        queue = self._waiting.get(client)
        if queue is not None and future in queue:
            queue.remove(future)
            if not queue:
                del self._waiting[client]


class ClientRounds(Generic[J]):
    """Jobs queued per client, taken round robin over clients and in order within one."""

    def __init__(self) -> None:
        self._queues: OrderedDict[str, deque[J]] = OrderedDict()
        self._last = ""
        """The client taken last: a client that joins goes before its next turn."""

    def __len__(self) -> int:
        return sum(len(q) for q in self._queues.values())

    def __bool__(self) -> bool:
        return bool(self._queues)

    def add(self, client: str, job: J) -> None:
        """Queue ``job`` behind this client's others (a new client joins the round at its end,
        but before the client taken last: that one has just had its turn)."""
        queue = self._queues.get(client)
        if queue is None:
            queue = self._queues[client] = deque()
            if self._last in self._queues and self._last != client:
                self._queues.move_to_end(self._last)  # it has just had its turn: after this one
        queue.append(job)

    def next(self) -> tuple[str, J]:
        """The next client's first job, removed: give it back with :meth:`again` if it is not done."""
        client, queue = next(iter(self._queues.items()))
        job = queue.popleft()
        if queue:
            self._queues.move_to_end(client)
        else:
            del self._queues[client]
        self._last = client
        return client, job

    def again(self, client: str, job: J) -> None:
        """Put a job that ran one slice back at the head of its client's queue (its client waits its turn)."""
        queue = self._queues.get(client)
        if queue is None:
            self._queues[client] = deque([job])
        else:
            queue.appendleft(job)
            self._queues.move_to_end(client)
