"""After a long slice, a client with nobody else connected takes its next slice at once.

:meth:`FairTurns.take_now` refuses the client that just ran a long slice so that another
client's request on its way is read first; with no other client connected there is none, and
refusing it only queued its requests behind one another, one grant a turn of the loop. The
connection guard says who is connected. Counters, not wall time.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agentenv.integrations.serve_env import fair
from agentenv.integrations.serve_env.fair import FairTurns
from agentenv.integrations.serve_env.limits import EnvServerLimits
from agentenv.integrations.serve_env.sessions import EnvPool, Trajectories
from agentenv.integrations.verl_tool.app import VerlToolApp
from agentenv.retrieval.connections import ConnectionGuard, GuardSettings


class _Conn:
    """What the guard reads and writes on a connection."""

    def __init__(self, client: str) -> None:
        self.guard_client = client


def test_the_client_of_a_long_slice_goes_on_when_alone(monkeypatch: Any) -> None:
    monkeypatch.setattr(fair, "LONG_SLICE_S", 0.0)  # every slice counts as long
    connected = {"greedy"}
    turns = FairTurns(alone=lambda client: connected == {client})
    assert turns.take_now("greedy")
    turns.release()
    assert turns.take_now("greedy")  # nobody else connected: no request can be on its way
    turns.release()
    connected.add("legit")
    assert not turns.take_now("greedy")  # another client is connected: the loop turns first
    assert turns.take_now("legit")
    turns.release()


def test_the_guard_says_whether_a_client_is_the_only_one_connected() -> None:
    async def main() -> None:
        guard = ConnectionGuard(GuardSettings())
        loop = asyncio.get_running_loop()
        assert not guard.only_client("a")  # nobody connected
        first, second, other = _Conn("a"), _Conn("a"), _Conn("b")
        assert guard.admit(first, loop) and guard.admit(second, loop)
        assert guard.only_client("a") and not guard.only_client("b")
        assert guard.admit(other, loop)
        assert not guard.only_client("a")
        guard.release(other)
        assert guard.only_client("a")

    asyncio.run(main())


def test_the_verl_tool_app_asks_its_connection_guard() -> None:
    async def main() -> None:
        pool = EnvPool(lambda split: None, max_idle=1)
        app = VerlToolApp(Trajectories(pool, EnvServerLimits(), default_split="test"), {})
        assert app.turns.alone is not None and not app.turns.alone("a")  # no guard yet
        guard = app.state.connections = ConnectionGuard(GuardSettings())
        assert guard.admit(_Conn("a"), asyncio.get_running_loop())
        assert app.turns.alone("a") and not app.turns.alone("b")

    asyncio.run(main())
