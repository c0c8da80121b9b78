"""OpenEnv's WebSocket sessions shared per client: at the cap, a client below its share takes a slot back.

Why: OpenEnv holds one env per WebSocket session, at most ``max_live_envs`` of them, and
refuses a session past that (``CAPACITY_REACHED``). A client that opened the cap's worth of
sessions and never finished them (its sockets open, a message now and then inside
``idle_timeout_s``) kept every other client from starting. Here, as serve-env's verl-tool
cap does (:meth:`~agentenv.integrations.serve_env.sessions.Trajectories.take_back`), a new
session of a client below its share (the cap over the clients holding sessions and it)
closes the least recently active session of a client above its share, and starts once that
session has ended. A client at its share or above is refused at the cap, as before.

The client is the peer address (:func:`~agentenv.integrations.serve_env.fair.client_of`).
:class:`SessionCap` only keeps the books; :class:`~agentenv.integrations.openenv.app.Hardened`
closes the sessions it names (a WebSocket close with code 1013, "try again later", and the
reason) and waits for them to end.

Example:
    >>> cap = SessionCap(2)
    >>> w1, _ = cap.open("walker")
    >>> w2, _ = cap.open("walker")
    >>> cap.active(w1)  # the walker still steps w1; w2 it left
    >>> legit, victims = cap.open("legit")
    >>> victims == [w2], w2.reason is not None, cap.per_client
    (True, True, {'walker': 1, 'legit': 1})
    >>> _, victims = cap.open("walker")  # at its share: nothing to take back
    >>> victims
    []
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable

CLOSE_CODE = 1013
"""The WebSocket close code of a session taken back ("try again later")."""


class Session:
    """One WebSocket session: its client, when it last sent a message, and how it ends.

    Its futures are made in the running loop when first asked for (the books need no loop).
    """

    def __init__(self, client: str, last_active: float) -> None:
        self.client = client
        self.last_active = last_active
        self.reason: str | None = None
        """Why it was taken back (None: it was not)."""
        self._evicted: asyncio.Future[str] | None = None
        self._ended: asyncio.Future[None] | None = None
        self.done = False

    def evicted(self) -> asyncio.Future[str]:
        """Set (to the close reason) when another client takes its slot back."""
        if self._evicted is None:
            self._evicted = asyncio.get_running_loop().create_future()
            if self.reason is not None:
                self._evicted.set_result(self.reason)
        return self._evicted

    def ended(self) -> asyncio.Future[None]:
        """Set when its OpenEnv session has ended (its env given back)."""
        if self._ended is None:
            self._ended = asyncio.get_running_loop().create_future()
            if self.done:
                self._ended.set_result(None)
        return self._ended

    def evict(self, reason: str) -> None:
        self.reason = reason
        if self._evicted is not None and not self._evicted.done():
            self._evicted.set_result(reason)

    def end(self) -> None:
        self.done = True
        if self._ended is not None and not self._ended.done():
            self._ended.set_result(None)


class SessionCap:
    """Sessions per client, least recently active first; at ``cap``, slots taken back as the module says."""

    def __init__(self, cap: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.cap = cap
        self.clock = clock
        self.live: OrderedDict[Session, None] = OrderedDict()
        """Sessions not taken back, least recently active first."""
        self.per_client: dict[str, int] = {}
        self.taken_back = 0

    def open(self, client: str) -> tuple[Session, list[Session]]:
        """Count a new session of ``client``; return it and the sessions it takes back (evicted now:
        wait for their ``ended()`` before starting it). No victims at the cap: the session is refused
        downstream, as past any cap."""
        victims = self._victims(client) if len(self.live) >= self.cap else []
        for victim in victims:
            self._drop(victim)
            victim.evict(
                f"taken back: the server was at its cap of {self.cap} sessions and this client "
                "held more than its share; close sessions you no longer step"
            )
            self.taken_back += 1
        session = Session(client, self.clock())
        self.live[session] = None
        self.per_client[client] = self.per_client.get(client, 0) + 1
        return session, victims

    def active(self, session: Session) -> None:
        """``session`` sent a message: it is now the most recently active."""
        session.last_active = self.clock()
        if session in self.live:
            self.live.move_to_end(session)

    def close(self, session: Session) -> None:
        """``session`` has ended (whatever ended it)."""
        self._drop(session)
        session.end()

    def share(self, client: str) -> int:
        """``client``'s share of the cap: the cap over the clients holding sessions and it."""
        clients = len(self.per_client) + (client not in self.per_client)
        return max(self.cap // clients, 1)

    def _victims(self, client: str) -> list[Session]:
        needed = len(self.live) + 1 - self.cap
        share = self.share(client)
        if self.per_client.get(client, 0) + 1 > share:
            return []
        above = {c: n - share for c, n in self.per_client.items() if n > share and c != client}
        if sum(above.values()) < needed:
            return []
        victims = []
        for session in self.live:  # least recently active first
            if len(victims) == needed:
                break
            if above.get(session.client, 0) > 0:
                above[session.client] -= 1
                victims.append(session)
        return victims

    def _drop(self, session: Session) -> None:
        if self.live.pop(session, 0) is None:  # present (its value is None)
            held = self.per_client[session.client] - 1
            if held:
                self.per_client[session.client] = held
            else:
                del self.per_client[session.client]
