"""CPU the verl-tool server adds per MediaSearch episode beyond the env's own work (not a test).

    python benchmarks/serve_env_overhead.py [--repeats 20]
    PYTHONPATH=/tmp/old python benchmarks/serve_env_overhead.py   # another checkout's app

Why: ``benchmarks/serve_env_load.py`` gives the server's whole CPU per episode and
``benchmarks/serve_env_app_cpu.py`` the app's with the env; on a shared machine both move by
more than the app's own cost between runs. Here the env is taken out: 64 MediaSearch episodes
(reset, search, answer on the train split) are played once, and the served envs replay their
results (observations, rewards, infos) with no work, so all the CPU measured is the server's:

* ``app``: ``parse_request`` and ``VerlToolApp.answer`` on bodies built beforehand (64
  trajectories, 4 requests of 16 at once, or 64 of one with a ``finish`` after each episode, as
  verl-tool's agent loop sends them);
* ``http``: the same requests as bytes through the server's HTTP protocol (uvicorn's parser, the
  connection guard and the lean cycle, ``lean_http.py``) on in-memory transports, with no socket.

What the loopback run adds over ``http`` is the kernel's and the event loop's work per request
and what sharing the cores with the client costs. The figure is the minimum over ``--repeats``
passes of 256 episodes (load on the machine only adds to it), beside the median, and beside the
in-process loop's CPU per episode on the real env (64 envs in lockstep, each pass on tasks it has
not played: a loop that repeats a few hundred tasks costs ~25% less) for scale.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import time
from typing import Any

EPISODES = 64


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20, help="passes of 256 episodes per case")
    args = parser.parse_args()

    import gymnasium as gym
    import uvicorn.server

    import agentenv
    from agentenv.engine.actions import answer, tool_call
    from agentenv.integrations.serve_env.limits import EnvServerLimits
    from agentenv.integrations.serve_env.runner import uvicorn_server
    from agentenv.integrations.serve_env.sessions import EnvPool, Trajectories
    from agentenv.integrations.verl_tool.app import VerlToolApp
    from agentenv.integrations.verl_tool.protocol import parse_request
    from agentenv.retrieval.server import bind_listener

    envs = [gym.make("MediaSearch-v0", split="train") for _ in range(EPISODES)]
    searches = [tool_call("search", query=t.prompt[:200]) for t in envs[0].unwrapped.tasks]
    final = answer("Inception")
    played = []
    for k, env in enumerate(envs):
        played.append((env.reset(options={"index": k}), env.step(searches[k]), env.step(final)))

    class Replay:
        """An env that answers what MediaSearch answered on task ``index``, with no work."""

        def __init__(self) -> None:
            self.task = self.turn = 0

        def reset(self, seed: int | None = None, options: Any = None) -> Any:
            self.task, self.turn = (options or {}).get("index", 0) % EPISODES, 0
            return played[self.task][0]

        def step(self, action: str) -> Any:
            self.turn += 1
            return played[self.task][self.turn]

        def close(self) -> None:
            pass

    limits = EnvServerLimits()
    pool = EnvPool(lambda split: Replay(), max_idle=limits.max_live_envs)
    app = VerlToolApp(Trajectories(pool, limits, default_split="train"), {})

    fresh = [EPISODES]

    def in_process(rounds: int) -> float:
        """The loop on tasks it has not played yet (repeating a few tasks runs on warm memos)."""
        cpu = time.process_time()
        for _ in range(rounds):
            first, fresh[0] = fresh[0], fresh[0] + EPISODES
            tasks = [(first + k) % len(searches) for k in range(EPISODES)]
            for task, env in zip(tasks, envs, strict=True):
                env.reset(options={"index": task})
            for task, env in zip(tasks, envs, strict=True):
                env.step(searches[task])
            for env in envs:
                env.step(final)
        return (time.process_time() - cpu) / (rounds * EPISODES)

    def post(body: dict[str, Any]) -> bytes:
        data = json.dumps(body).encode()
        return (
            b"POST /get_observation HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(data), data)
        )

    def waves(tag: str, rounds: int, batch: int) -> list[list[tuple[int, bytes]]]:
        """Per round, the requests sent at once: starts and searches, answers, finishes."""
        out = []
        for r in range(rounds):
            steps: list[list[tuple[int, bytes]]] = [[], [], []]
            for c, first in enumerate(range(0, EPISODES, batch)):
                ids = [f"{tag}-r{r}-{first + b}" for b in range(batch)]
                flags = {"finish": [False] * batch, "is_last_step": [False] * batch}
                tasks = range(first, first + batch)
                steps[0].append(
                    (
                        c,
                        post(
                            {
                                "trajectory_ids": ids,
                                "actions": [searches[t] for t in tasks],
                                **flags,
                                "extra_fields": [{"index": t} for t in tasks],
                            }
                        ),
                    )
                )
                steps[1].append(
                    (c, post({"trajectory_ids": ids, "actions": [final] * batch, **flags}))
                )
                if batch == 1:
                    done = {"finish": [True], "is_last_step": [True]}
                    steps[2].append((c, post({"trajectory_ids": ids, "actions": [""], **done})))
            out += [wave for wave in steps if wave]
        return out

    class Transport:
        """An in-memory transport: what the protocol writes is kept, nothing is sent."""

        def __init__(self, port: int) -> None:
            self.peer, self.out, self.closing = ("127.0.0.1", port), [], False

        def get_extra_info(self, name: str, default: Any = None) -> Any:
            return {"peername": self.peer, "sockname": ("127.0.0.1", 8000)}.get(name, default)

        def write(self, data: bytes) -> None:
            self.out.append(data)

        def is_closing(self) -> bool:
            return self.closing

        def close(self) -> None:
            self.closing = True

        def pause_reading(self) -> None:
            pass

        def resume_reading(self) -> None:
            pass

        def set_write_buffer_limits(self, *args: Any, **kwargs: Any) -> None:
            pass

        def get_write_buffer_size(self) -> int:
            return 0

    async def run() -> dict[str, list[float]]:
        loop = asyncio.get_running_loop()
        config = uvicorn_server(
            app, bind_listener("127.0.0.1", 0), limits, log_level="error"
        ).config
        config.load()
        state = uvicorn.server.ServerState()
        passes = [0]

        async def through(batch: int, http: bool, rounds: int) -> float:
            passes[0] += 1
            todo = waves(f"p{passes[0]}", rounds, batch)
            conns = []
            for c in range(EPISODES // batch):
                protocol = config.http_protocol_class(
                    config=config, server_state=state, app_state={}, _loop=loop
                )
                transport = Transport(40000 + c)
                protocol.connection_made(transport)
                conns.append((protocol, transport))
            cpu = time.process_time()
            for wave in todo:
                if http:
                    for c, request in wave:
                        conns[c][0].data_received(request)
                    while any(not t.out for _, t in conns[: len(wave)]):
                        await asyncio.sleep(0)
                    for _, transport in conns:
                        transport.out.clear()
                else:
                    bodies = [request[request.find(b"\r\n\r\n") + 4 :] for _, request in wave]
                    await asyncio.gather(
                        *(app.answer(parse_request(b, limits), "127.0.0.1") for b in bodies)
                    )
            spent = time.process_time() - cpu
            # Closed after each pass: past the guard's connection cap, later passes' connections
            # were refused (a 503 written, the transport closed) and still answered.
            for protocol, transport in conns:
                transport.close()
                protocol.connection_lost(None)
            return spent / (rounds * EPISODES)

        cases = {"app, 16 a request": (16, False), "app, 1 a request + finish": (1, False)}
        cases |= {"http, 16 a request": (16, True), "http, 1 a request + finish": (1, True)}
        for batch, http in cases.values():  # warm up
            await through(batch, http, 2)
        times: dict[str, list[float]] = {name: [] for name in ["in-process loop", *cases]}
        for _ in range(args.repeats):
            times["in-process loop"].append(in_process(4))
            for name, (batch, http) in cases.items():
                times[name].append(await through(batch, http, 4))
        return times

    for env in [pool.take("train") for _ in range(EPISODES)]:  # the pool's steady state
        pool.give("train", env)
    gc.collect()
    gc.freeze()  # as serve-env does once its envs are built
    try:
        import uvloop

        times = uvloop.run(run())
    except ImportError:
        times = asyncio.run(run())
    print(
        f"agentenv at {os.path.dirname(agentenv.__file__)}; {args.repeats} passes of "
        f"{4 * EPISODES} episodes, load {os.getloadavg()[0]:.1f}; CPU us per episode, min (median):"
    )
    for name, values in times.items():
        scale = " (the real env's work)" if name == "in-process loop" else " over a replayed env"
        print(f"  {name}{scale}: {min(values) * 1e6:.1f} ({statistics.median(values) * 1e6:.1f})")


if __name__ == "__main__":
    main()
