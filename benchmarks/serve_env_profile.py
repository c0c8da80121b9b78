"""Where serve-env's CPU per episode goes: HTTP, JSON, the app's bookkeeping, the env (not a test; prints a table).

    python benchmarks/serve_env_profile.py [--episodes 3000] [--batch 1|16]

Why: the server spent 221-241 µs of CPU per MediaSearch episode against 139 µs
in process, and the front alone 326 µs per one-trajectory episode with a
``finish`` after it (verl-tool's own pattern). To cut it, first see where it
goes. The real one-process server (uvicorn behind the connection guard, the
verl-tool app) runs in this process's main thread under ``cProfile``; a client
in a child process plays two-step MediaSearch episodes (search, then answer)
on loopback, ``--batch`` trajectories a request, plus one ``finish`` request per
batch when ``--batch`` is 1. Each profiled function's own time is put in one
bucket by the file it lives in: the HTTP server (uvicorn, httptools, h11,
asyncio and the socket calls), JSON, the connection guard, the verl-tool app
and trajectories, and the env (everything under ``agentenv`` else, with the
family's tools). Printed: µs of CPU per episode per bucket (with the profiler's
overhead, so the split matters more than the sum), and the top functions.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import multiprocessing as mp
import os
import pstats
import sys
import threading
import time
from collections import defaultdict

BUCKETS = (
    ("json", ("json/", "_json")),
    (
        "http (uvicorn, httptools, asyncio, sockets)",
        (
            "uvicorn",
            "httptools",
            "h11",
            "asyncio",
            "selectors",
            "socket",
            "<method 'send",
            "<method 'recv",
        ),
    ),
    ("connection guard", ("retrieval/connections", "retrieval/server_app")),
    (
        "verl-tool app + trajectories + schedule",
        ("integrations/verl_tool", "integrations/serve_env"),
    ),
    ("env step (engine, tools, grading)", ("agentenv/", "envs/", "corpora/", "numpy", "pydantic")),
)


def bucket_of(filename: str, name: str) -> str:
    where = f"{filename}:{name}"
    for label, needles in BUCKETS:
        if any(n in where for n in needles):
            return label
    return "other (builtins, interpreter)"


def client(port: int, episodes: int, batch: int, done: object) -> None:
    """Two-step episodes (a search, then an answer), ``batch`` trajectories a request."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def post(payload: dict) -> dict:
        conn.request(
            "POST",
            "/get_observation",
            body=json.dumps(payload).encode(),
            headers={"Content-Type": "application/json"},
        )
        response = conn.getresponse()
        body = response.read()
        if response.status != 200:
            raise RuntimeError(f"HTTP {response.status}: {body[:200]!r}")
        return json.loads(body)

    search = '<tool_call>{"name": "search", "arguments": {"query": "heat 1995 michael mann"}}</tool_call>'
    for start in range(0, episodes, batch):
        ids = [f"e{start + i}" for i in range(batch)]
        fields = [{"seed": start + i, "index": (start + i) % 500} for i in range(batch)]
        post({"trajectory_ids": ids, "actions": [search] * batch, "extra_fields": fields})
        post(
            {
                "trajectory_ids": ids,
                "actions": ["<answer>Heat</answer>"] * batch,
                "extra_fields": fields,
            }
        )
        if batch == 1:  # verl-tool's agent loop: one trajectory a request, then finish
            post({"trajectory_ids": ids, "actions": [""], "finish": [True]})
    conn.close()
    done.set()  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()

    from agentenv.integrations.serve_env.limits import EnvServerLimits
    from agentenv.integrations.serve_env.runner import uvicorn_server
    from agentenv.integrations.verl_tool import create_app
    from agentenv.retrieval.server import bind_listener

    limits = EnvServerLimits()
    app = create_app("MediaSearch-v0", split="train", env_kwargs={}, limits=limits)
    sock = bind_listener("127.0.0.1", 0)
    port = sock.getsockname()[1]
    loops: list = []

    async def capturing(scope: dict, receive: object, send: object) -> None:
        if not loops and scope["type"] == "http":
            import asyncio

            loops.append(asyncio.get_running_loop())
        await app(scope, receive, send)

    capturing.state = app.state  # type: ignore[attr-defined] - the guard's counters, as serve-env sets
    capturing.routes = app.routes  # type: ignore[attr-defined] - the hot route takes the lean cycle
    server = uvicorn_server(capturing, sock, limits, log_level="error")
    ctx = mp.get_context("fork")
    warm, done = ctx.Event(), ctx.Event()
    warmup = ctx.Process(target=client, args=(port, 64, args.batch, warm), daemon=True)
    profiler = cProfile.Profile(
        time.thread_time
    )  # CPU of the server thread, not wall time (a loaded machine preempts it)
    state: dict[str, float] = {}

    def drive() -> None:
        while not server.started:  # the socket listens once uvicorn has started
            time.sleep(0.05)
        warmup.start()
        warm.wait(300)
        proc = ctx.Process(target=client, args=(port, args.episodes, args.batch, done), daemon=True)
        on_loop(
            lambda: (
                state.update(cpu0=time.process_time(), t0=time.perf_counter()),
                profiler.enable(),
            )
        )
        proc.start()
        done.wait(600)
        on_loop(
            lambda: (
                profiler.disable(),
                state.update(cpu1=time.process_time(), t1=time.perf_counter()),
            )
        )
        server.should_exit = True

    def on_loop(fn: object) -> None:
        """Run ``fn`` in the server's thread (a profiler profiles the thread that enables it)."""
        ran = threading.Event()
        loops[0].call_soon_threadsafe(lambda: (fn(), ran.set()))  # type: ignore[operator]
        ran.wait(60)

    # The server runs in the main thread; a helper thread drives the clients.
    threading.Thread(target=drive, daemon=True).start()
    server.run(sockets=[sock])
    stats = pstats.Stats(profiler)
    per: dict[str, float] = defaultdict(float)
    total = 0.0
    for (filename, _line, name), (_cc, _nc, tottime, _ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        per[bucket_of(filename, name)] += tottime
        total += tottime
    n = args.episodes
    cpu = state["cpu1"] - state["cpu0"]
    print(
        f"serve-env (verl-tool, one process), MediaSearch-v0, {n} two-step episodes, batch {args.batch}"
        f"{' + finish' if args.batch == 1 else ''}; load {os.getloadavg()[0]:.1f}; server CPU "
        f"{cpu / n * 1e6:.0f} us per episode under the profiler ({(state['t1'] - state['t0']):.1f} s wall)"
    )
    for label, seconds in sorted(per.items(), key=lambda kv: -kv[1]):
        print(f"  {label:<48} {seconds / n * 1e6:8.1f} us/episode  {seconds / total:6.1%}")
    print("top functions by own time:")
    stats.sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    sys.exit(main())
