"""serve-env shares its work and its live-trajectory cap per client.

A client at the limits delays another client's request by one slice however many
requests it keeps open (:class:`FairTurns`, :class:`ClientRounds`), and a client that
started trajectories and walked away cannot keep another from starting: at the cap, a
client below its share takes back the least recently stepped trajectories of a client
above its own. Counters and orders, not wall time.
"""

from __future__ import annotations

import asyncio
import time

import gymnasium as gym
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.engine.actions import tool_call
from agentenv.integrations.serve_env.fair import ClientRounds, FairTurns, client_of
from agentenv.integrations.serve_env.limits import EnvServerLimits
from agentenv.integrations.serve_env.sessions import EnvPool, Trajectories, start_from_fields

SEARCH = tool_call("search", query="heat")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_greedy_client_with_many_requests_delays_another_by_one_slice() -> None:
    """Eight greedy requests of 20 slices each are running when a legit one asks: it runs after
    the slice in progress and at most the one already handed on, where the event loop's plain
    round of the open requests would have run all eight first."""
    order: list[str] = []

    async def request(turns: FairTurns, client: str, name: str, slices: int) -> None:
        if name == "legit":
            order.append("asks")
        await turns.acquire(client)
        try:
            for i in range(slices):
                order.append(name)
                if i + 1 < slices:
                    await turns.pass_on(client)
        finally:
            turns.release()

    async def main() -> None:
        turns = FairTurns()
        greedy = [asyncio.create_task(request(turns, "10.0.0.1", f"g{i}", 20)) for i in range(8)]
        for _ in range(30):  # the greedy requests are well under way
            await asyncio.sleep(0)
        await asyncio.create_task(request(turns, "10.0.0.2", "legit", 1))
        await asyncio.gather(*greedy)
        await asyncio.sleep(0)
        assert turns.waiting == 0 and not turns._busy

    asyncio.run(main())
    between = order[order.index("asks") + 1 : order.index("legit")]
    assert len(between) <= 1, between  # the slice in progress (or granted already), no more
    assert order.count("legit") == 1 and len(order) == 162


def test_a_client_that_starts_waiting_goes_before_the_next_slice_of_the_one_running() -> None:
    """Round robin: the greedy client has just had its turn when the legit one arrives, so the
    legit job runs next, not after one more greedy slice (in a worker and in the event loop)."""
    rounds: ClientRounds[str] = ClientRounds()
    rounds.add("greedy", "g1")
    client, job = rounds.next()  # g1 runs a slice; meanwhile the legit job arrives
    rounds.again(client, job)
    rounds.add("legit", "l1")
    assert rounds.next() == ("legit", "l1")
    assert rounds.next() == ("greedy", "g1")

    async def main() -> list[str]:
        turns, order = FairTurns(), []

        async def greedy(name: str) -> None:
            await turns.acquire("greedy")
            order.append(name)
            await asyncio.sleep(0.01)  # its slice: the legit client asks meanwhile
            turns.release()

        async def legit() -> None:
            await asyncio.sleep(0.005)
            await turns.acquire("legit")
            order.append("legit")
            turns.release()

        await asyncio.gather(greedy("g1"), greedy("g2"), legit())
        return order

    assert asyncio.run(main()) == ["g1", "legit", "g2"]


def test_after_a_long_slice_a_request_still_on_its_way_asks_first() -> None:
    """A request that arrives during a long greedy slice takes the loop a few turns to reach
    acquire; the greedy client's next slice waits for them (OpenEnv's steps: acquire, release),
    and so does a long request's next slice (pass_on): the legit request runs right after."""
    from agentenv.integrations.serve_env.fair import LET_IN_TURNS, LONG_SLICE_S

    def block(seconds: float) -> None:  # a step: the loop does nothing else meanwhile
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    async def main(passing: bool) -> list[str]:
        turns, order = FairTurns(), []

        async def greedy() -> None:
            if passing:  # one request, slices with pass_on
                await turns.acquire("greedy")
                for i in range(3):
                    order.append(f"g{i}")
                    block(LONG_SLICE_S * 1.5)
                    if i < 2:
                        await turns.pass_on("greedy")
                turns.release()
                return
            for i in range(3):  # three steps, acquire and release each (OpenEnv's sessions)
                await turns.acquire("greedy")
                order.append(f"g{i}")
                block(LONG_SLICE_S * 1.5)
                turns.release()

        async def legit() -> None:
            await asyncio.sleep(0)  # arrives while g0 runs (g0 is granted on the first turn)
            await asyncio.sleep(0)
            for _ in range(LET_IN_TURNS - 3):  # on its way: socket, parser, task, app
                await asyncio.sleep(0)
            await turns.acquire("legit")
            order.append("legit")
            turns.release()

        await asyncio.gather(greedy(), legit())
        return order

    assert asyncio.run(main(passing=False))[:2] == ["g0", "legit"]
    assert asyncio.run(main(passing=True))[:2] == ["g0", "legit"]


def test_a_cancelled_wait_passes_its_turn_on() -> None:
    async def main() -> None:
        turns = FairTurns()
        await turns.acquire("a")
        waiter = asyncio.create_task(turns.acquire("b"))
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        turns.release()
        await asyncio.wait_for(turns.acquire("c"), 1.0)  # nothing stuck behind the cancelled one
        turns.release()

    asyncio.run(main())


def test_client_rounds_go_round_robin_and_keep_each_clients_order() -> None:
    rounds: ClientRounds[str] = ClientRounds()
    for job in ("a1", "a2"):
        rounds.add("a", job)
    rounds.add("b", "b1")
    client, job = rounds.next()
    assert (client, job) == ("a", "a1")
    rounds.again(client, job)  # a1 ran one slice and is not done
    assert rounds.next() == ("b", "b1")
    assert rounds.next() == ("a", "a1")  # a's own order: a1 before a2
    assert rounds.next() == ("a", "a2") and not rounds


def test_the_client_is_the_peer_address() -> None:
    assert client_of({"client": ("127.0.0.2", 5123)}) == "127.0.0.2"
    assert client_of({}) == "?"


@pytest.fixture()
def trajectories() -> Trajectories:
    def make(split: str) -> gym.Env:
        return gym.make("MediaSearch-v0", split=split)

    limits = EnvServerLimits(max_live_envs=4, trajectory_idle_s=600.0)
    return Trajectories(EnvPool(make, max_idle=4), limits, default_split="test", clock=Clock())


def test_a_client_that_never_finishes_cannot_keep_another_from_starting(
    trajectories: Trajectories,
) -> None:
    clock = trajectories.clock
    for i in range(4):  # the walker fills the cap, steps one of them later, and never finishes
        clock.now = float(i)
        trajectories.start(f"w{i}", start_from_fields({"seed": i}), "walker")
    clock.now = 10.0
    trajectories.step("w0", SEARCH)  # w0 is the one it still steps; w1 is the idlest now
    clock.now = 20.0
    assert trajectories.room_for(1, "legit")  # share 2 each: one of the walker's goes
    assert "w1" not in trajectories.live and "w0" in trajectories.live
    assert "least recently stepped" in trajectories.ended["w1"]
    trajectories.start("l0", start_from_fields({"seed": 9}), "legit")
    assert trajectories.room_for(1, "legit")  # a second one: the walker still holds 3 > 2
    trajectories.start("l1", start_from_fields({"seed": 8}), "legit")
    assert trajectories.per_client == {"walker": 2, "legit": 2}
    assert not trajectories.room_for(1, "legit")  # past its own share now
    assert not trajectories.room_for(1, "walker")  # and the walker cannot take them back
    assert trajectories.stats.taken_back == 2
    assert set(trajectories.live) == {"w0", "w3", "l0", "l1"}


def test_below_the_cap_nobody_is_taken_back(trajectories: Trajectories) -> None:
    for i in range(3):
        trajectories.start(f"w{i}", start_from_fields({"seed": i}), "walker")
    assert trajectories.room_for(1, "legit") and trajectories.stats.taken_back == 0
    assert len(trajectories.live) == 3


def test_openenv_steps_take_turns_per_client() -> None:
    """OpenEnv calls ``step_async`` in each session's task; the client comes from the ASGI wrapper."""
    pytest.importorskip("openenv")
    from agentenv.integrations.openenv.environment import environment_class
    from agentenv.integrations.openenv.models import TextAction
    from agentenv.integrations.serve_env.fair import CLIENT

    pool = EnvPool(lambda split: gym.make("MediaSearch-v0", split=split), max_idle=4)
    cls = environment_class(pool, default_split="test", limits=EnvServerLimits())
    order: list[str] = []

    async def session(client: str, steps: int) -> None:
        CLIENT.set(client)
        env = cls()
        await env.reset_async(seed=0, index=0)
        for _ in range(steps):
            await env.step_async(TextAction(text=SEARCH))
            order.append(client)
            await asyncio.sleep(0)
        env.close()

    async def main() -> None:
        await asyncio.gather(*(session("greedy", 3) for _ in range(4)), session("legit", 3))

    asyncio.run(main())
    assert cls.turns is not None and cls.turns.granted >= 15 and cls.turns.waiting == 0
    assert order.count("legit") == 3 and order.count("greedy") == 12
    # Round robin per client: greedy, legit, greedy, legit, ...; in arrival order the legit
    # session's third step would come 15th, after every greedy session's.
    assert max(i for i, c in enumerate(order) if c == "legit") <= 7, order


def test_openenv_sessions_are_taken_back_from_the_clients_above_their_share() -> None:
    """Three clients at a cap of 6: a walker holding 5 loses its idlest to each newcomer below
    its share (6 // 3 = 2), never the one it still uses; a client at its share takes nothing."""
    from agentenv.integrations.openenv.session_cap import SessionCap

    clock = Clock()
    cap = SessionCap(6, clock=clock)
    walker = []
    for i in range(5):
        clock.now = float(i)
        walker.append(cap.open("walker")[0])
    cap.open("a")
    clock.now = 10.0
    cap.active(walker[0])  # the walker still uses its first
    _, victims = cap.open("b")
    assert victims == [walker[1]] and walker[1].reason and "taken back" in walker[1].reason
    _, victims = cap.open("b")
    assert victims == [walker[2]]
    _, victims = cap.open("b")  # b is at its share (2): refused downstream, nothing taken
    assert victims == [] and cap.per_client == {"walker": 3, "a": 1, "b": 3}
    cap.close(walker[1])  # an evicted session that ends is not counted twice
    assert cap.per_client["walker"] == 3 and cap.taken_back == 2
    assert walker[0] in cap.live and walker[1] not in cap.live
