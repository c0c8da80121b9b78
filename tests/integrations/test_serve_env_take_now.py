"""A verl-tool request takes its slice at once when nobody else runs or waits, and waits otherwise.

:meth:`FairTurns.take_now` saves a one-trajectory request a turn of the event loop; it must
never jump a slice in progress or waiting, nor let the client that just ran a long slice go on
before the loop has turned (:class:`FairTurns`'s bound for other clients). Counters and orders,
not wall time.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agentenv.integrations.serve_env import fair
from agentenv.integrations.serve_env.fair import FairTurns
from agentenv.integrations.serve_env.limits import EnvServerLimits
from agentenv.integrations.serve_env.sessions import EnvPool, Trajectories
from agentenv.integrations.verl_tool import protocol
from agentenv.integrations.verl_tool.app import VerlToolApp


class EchoEnv:
    """Steps to the action's ``obs``; ends the episode when it says ``end``."""

    def reset(self, seed: int | None = None, options: Any = None) -> tuple[str, dict[str, Any]]:
        return "start", {}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        said = json.loads(action)
        return said.get("obs", ""), 0.0, said.get("end", False), False, {}

    def close(self) -> None:
        pass


def _app() -> VerlToolApp:
    pool = EnvPool(lambda split: EchoEnv(), max_idle=8)
    return VerlToolApp(Trajectories(pool, EnvServerLimits(), default_split="test"), {})


def test_take_now_only_when_nothing_runs_or_waits() -> None:
    async def main() -> None:
        turns = FairTurns()
        assert turns.take_now("a") and turns.granted == 1
        assert not turns.take_now("b")  # a's slice runs
        waiter = asyncio.create_task(turns.acquire("b"))
        await asyncio.sleep(0)
        turns.release()  # b is granted
        await waiter
        assert not turns.take_now("a")  # b's slice runs
        turns.release()
        assert turns.idle and turns.take_now("a")
        turns.release()

    asyncio.run(main())


def test_the_client_of_a_long_slice_waits_for_the_loop_to_turn(monkeypatch: Any) -> None:
    monkeypatch.setattr(fair, "LONG_SLICE_S", 0.0)  # every slice counts as long

    async def main() -> None:
        turns = FairTurns()
        assert turns.take_now("greedy")
        turns.release()
        assert not turns.take_now("greedy")  # it would go on before others' requests are read
        assert turns.take_now("legit")
        turns.release()

    asyncio.run(main())


def test_a_one_slice_request_is_answered_in_the_call_and_waits_behind_a_slice() -> None:
    app = _app()
    step = [protocol.Item("a", '{"obs": "x"}', False, False, {})]

    async def main() -> None:
        answered = app.answer_soon(step, "10.0.0.1")
        assert type(answered) is tuple and answered[0] == 200  # no coroutine, no turn awaited
        assert app.turns.idle and app.turns.granted == 1

        assert app.turns.take_now("10.0.0.2")  # another client's slice runs
        later = app.answer_soon([protocol.Item("a", '{"obs": "y"}', False, False, {})], "10.0.0.1")
        assert type(later) is not tuple
        waiting = asyncio.ensure_future(later)
        for _ in range(5):
            await asyncio.sleep(0)
        assert not waiting.done()
        app.turns.release()
        status, body, _ = await waiting
        assert status == 200 and body.startswith(b'{"observations": [{"obs": "y"')
        assert app.turns.idle

    asyncio.run(main())
