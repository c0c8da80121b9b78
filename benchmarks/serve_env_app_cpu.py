"""CPU per MediaSearch episode of the verl-tool app's work with no HTTP, beside the in-process loop (not a test).

    python benchmarks/serve_env_app_cpu.py [--rounds 15] [--repeats 3]

Why: ``benchmarks/serve_env_load.py`` gives the server's whole CPU per episode (HTTP, event loop,
app, env); this splits off the app. In one process, on 64 envs: the in-process loop (reset,
search, answer, 64 envs in lockstep, as ``serve_env_load.py`` times it), then the same episodes
through ``VerlToolApp.answer`` on bodies built beforehand (``parse_request``, the per-client
turns, starts, steps, observations as JSON, the answer's body), 16 trajectories a request, and
one a request with a ``finish`` after it (verl-tool's agent loop). What the app adds over the
loop is then its parsing, bookkeeping, scheduling and JSON; what ``serve_env_load.py`` adds over
this is HTTP and the process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="rounds of 64 episodes per timing")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import gymnasium as gym

    import agentenv  # noqa: F401 - registers the ids
    from agentenv.engine.actions import answer, tool_call
    from agentenv.integrations.serve_env.limits import EnvServerLimits
    from agentenv.integrations.verl_tool import create_app
    from agentenv.integrations.verl_tool.protocol import parse_request

    envs = [gym.make("MediaSearch-v0", split="train") for _ in range(64)]
    searches = [tool_call("search", query=task.prompt[:200]) for task in envs[0].unwrapped.tasks]
    final, n_tasks = answer("Inception"), len(searches)
    app = create_app("MediaSearch-v0", split="train", limits=EnvServerLimits())
    pool = app.trajectories.pool
    for env in [pool.take("train") for _ in range(64)]:  # the pool's steady state: 64 built envs
        pool.give("train", env)
    runs = [0]

    def in_process(rounds: int) -> float:
        cpu, first = time.process_time(), 0
        for _ in range(rounds):
            for k, env in enumerate(envs):
                env.reset(options={"index": (first + k) % n_tasks})
            for k, env in enumerate(envs):
                env.step(searches[(first + k) % n_tasks])
            for env in envs:
                env.step(final)
            first += 64
        return (time.process_time() - cpu) / (rounds * 64)

    def through_app(rounds: int, batch: int) -> float:
        runs[0] += 1
        bodies: list[bytes] = []
        for r in range(rounds):
            for start in range(0, 64, batch):
                ids = [f"x{runs[0]}-r{r}-{start + b}" for b in range(batch)]
                tasks = [(r * 64 + start + b) % n_tasks for b in range(batch)]
                common = {"finish": [False] * batch, "is_last_step": [False] * batch}
                bodies.append(
                    json.dumps(
                        {
                            "trajectory_ids": ids,
                            "actions": [searches[t] for t in tasks],
                            "extra_fields": [{"index": t} for t in tasks],
                            **common,
                        }
                    ).encode()
                )
                bodies.append(
                    json.dumps(
                        {"trajectory_ids": ids, "actions": [final] * batch, **common}
                    ).encode()
                )
                if batch == 1:
                    bodies.append(
                        json.dumps(
                            {"trajectory_ids": ids, "actions": [""], "finish": [True]}
                        ).encode()
                    )

        async def run() -> float:
            cpu = time.process_time()
            for body in bodies:
                await app.answer(parse_request(body, app.limits))
            return (time.process_time() - cpu) / (rounds * 64)

        return asyncio.run(run())

    in_process(2), through_app(2, 16), through_app(2, 1)  # warm caches and the pool
    loop, batched, one = [], [], []
    for _ in range(args.repeats):
        loop.append(in_process(args.rounds))
        batched.append(through_app(args.rounds, 16))
        one.append(through_app(args.rounds, 1))
    us = [statistics.median(x) * 1e6 for x in (loop, batched, one)]
    print(
        f"MediaSearch-v0, 64 envs, median of {args.repeats} x {args.rounds * 64} episodes, "
        f"load {os.getloadavg()[0]:.1f}: in-process loop {us[0]:.0f} us CPU per episode; "
        f"the app with no HTTP: 16 a request {us[1]:.0f} us ({us[1] / us[0]:.2f}x), one a request "
        f"+ finish {us[2]:.0f} us ({us[2] / us[0]:.2f}x)"
    )


if __name__ == "__main__":
    main()
