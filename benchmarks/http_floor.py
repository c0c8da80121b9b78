"""The CPU floor of any Python HTTP/1.1 server on this stack, beside serve-env's CPU budget.

Why: issue 47 asks ``serve-env --protocol verl-tool`` to spend at most 2x the in-process loop's
CPU per MediaSearch episode with one trajectory a request (verl-tool's agent loop: one action a
request, then ``finish``: 3 requests an episode) and at most 1.3x batched (16 trajectories a
request). Part of what the server spends is not its code but the HTTP layer every Python server
on uvloop and httptools pays: a ``recv`` and a ``send`` per request, the event loop's wake-up,
the parser's callbacks. This script measures that part alone, so the budget can be read as
"what is left for the env and the app above the floor".

The floor server (a child process: this script with ``--serve``) is a minimal ``asyncio.Protocol``
on uvloop, with no framework: it parses each request with httptools (the URL, the headers as a
list, the body, as any server must) or, with ``bare``, only finds the head's end and reads
``Content-Length``, and answers with a fixed JSON response whose size is serve-env's for the same
request (the search step's, the answer step's, the ``finish``'s, in turn on each connection; its
``dones`` and ``valids`` are what the client checks). It steps no env.

The client is ``benchmarks/serve_env_load.py``'s, imported: 64 keep-alive connections from one
thread, closed loop, one request in flight per connection, the same MediaSearch request bodies;
server CPU is the child's user + system time from /proc over the measured window. The in-process
loop (reset, search, answer on ``MediaSearch-v0``) is timed in the same run, in passes
interleaved with the floor's, and gives the budgets.

The floor per request depends on the rate: closed loop, the floor answers ~20,000 requests/s and
many share each wake-up of the loop and of the client; serve-env, spending more per request,
runs at ~3,000, so ``--rate`` also paces the one-trajectory shape there (the floor per request
roughly doubles).

Printed: the load average at the start and the end, then per case and parser the requests/s, the
server CPU per request and per episode (requests per episode x per request), and the budget
(2x or 1.3x the in-process loop's CPU per episode), what the budget leaves above the floor, and
that less the env's own work (the in-process loop's CPU, which the server also pays).

Usage:
    OMP_NUM_THREADS=1 python benchmarks/http_floor.py               # 3 passes x 2 s
    OMP_NUM_THREADS=1 python benchmarks/http_floor.py --passes 2 --seconds 1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from email.utils import formatdate
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench_common import print_machine  # noqa: E402
from retrieval_server import free_port, wait_ready  # noqa: E402
from serve_env_load import drive, media_workload  # noqa: E402

ANSWER_SIZES = {1: (809, 325, 57), 16: (10745, 4449)}
"""serve-env's answer body bytes for MediaSearch, per request of an episode, by trajectories a
request: search step, answer step, ``finish`` (one a request); search, answer (16 a request)."""
BUDGETS = {1: 2.0, 16: 1.3}
"""Issue 47: server CPU per episode over the in-process loop's."""


# -- the floor server (child process) ------------------------------------------------------------


def answer_bodies(batch: int) -> list[bytes]:
    """JSON bodies of serve-env's sizes, with the ``dones``/``valids`` the client checks."""
    bodies = []
    for turn, size in enumerate(ANSWER_SIZES[batch]):
        n = 0 if turn == 2 else batch  # the finish answers no observations
        record = {"observations": [""] * n, "dones": [turn == 1] * n, "valids": [True] * n}
        if n:
            record["observations"][0] = "x" * (size - len(json.dumps(record)))
        body = json.dumps(record).encode()
        bodies.append(body + b" " * (size - len(body)))
    return bodies


class _Date:
    """The ``date`` header line, rebuilt once a second (as uvicorn's server does)."""

    second = -1
    line = b""

    @classmethod
    def now(cls) -> bytes:
        second = int(time.time())
        if second != cls.second:
            cls.second = second
            cls.line = b"date: " + formatdate(second, usegmt=True).encode() + b"\r\n"
        return cls.line


def responses(bodies: list[bytes]) -> list[tuple[bytes, bytes]]:
    """(the head after the date, the body) per answer."""
    return [
        (
            b"content-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body),
            body,
        )
        for body in bodies
    ]


class HttpToolsFloor(asyncio.Protocol):
    """httptools parses; URL, headers and body are kept as any server keeps them."""

    answers: list[tuple[bytes, bytes]] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        import httptools

        self.transport = transport
        self.parser = httptools.HttpRequestParser(self)
        self.turn = 0
        self.url = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.body = b""

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except Exception:  # noqa: BLE001 - a malformed request ends the connection
            self.transport.close()

    def on_message_begin(self) -> None:
        self.url, self.headers, self.body = b"", [], b""

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name.lower(), value))

    def on_body(self, body: bytes) -> None:
        self.body = self.body + body if self.body else body

    def on_message_complete(self) -> None:
        head, body = self.answers[self.turn % len(self.answers)]
        self.turn += 1
        self.transport.write(b"HTTP/1.1 200 OK\r\n" + _Date.now() + head + body)


class BareFloor(asyncio.Protocol):
    """No parser: the head's end and ``Content-Length`` found in the bytes, then the body."""

    answers: list[tuple[bytes, bytes]] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.buf = b""
        self.turn = 0

    def data_received(self, data: bytes) -> None:
        buf = self.buf + data if self.buf else data
        while True:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                break
            at = buf.find(b"ength: ", 0, end)
            length = int(buf[at + 7 : buf.find(b"\r\n", at)]) if at >= 0 else 0
            if len(buf) < end + 4 + length:
                break
            buf = buf[end + 4 + length :]
            head, body = self.answers[self.turn % len(self.answers)]
            self.turn += 1
            self.transport.write(b"HTTP/1.1 200 OK\r\n" + _Date.now() + head + body)
        self.buf = buf


class ConstantApp:
    """serve-env's HTTP layer with no env: the verl-tool app's hot-path hooks, answering the fixed
    body for the request's turn (``observe_body``), so uvicorn, the connection guard and the lean
    cycle run as they do for ``serve-env --protocol verl-tool``.

    The turn is read from the body (a step that starts trajectories, a finish, else the answer
    step), not counted per peer: a later pass's connection may reuse an earlier one's port."""

    def __init__(self, bodies: list[bytes]) -> None:
        self.bodies = bodies
        self.routes = {"/get_observation": ("POST", None), "/health": ("GET", None)}

    def observe_body(self, body: bytes, peer: object) -> tuple[int, bytes, list]:
        if b'"extra_fields"' in body:
            return 200, self.bodies[0], []
        if b'"finish": [true' in body:
            return 200, self.bodies[-1], []
        return 200, self.bodies[1], []

    async def send_answer(self, send: object, status: int, body: bytes, extra: list) -> None:
        raise AssertionError("every answer is ready at once")

    async def __call__(self, scope: dict, receive: object, send: object) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":  # type: ignore[operator]
                await send({"type": "lifespan.startup.complete"})  # type: ignore[operator]
            await send({"type": "lifespan.shutdown.complete"})  # type: ignore[operator]
            return
        headers = [(b"content-type", b"application/json"), (b"content-length", b"2")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})  # type: ignore[operator]
        await send({"type": "http.response.body", "body": b"{}"})  # type: ignore[operator]


def serve(parser: str, batch: int, port: int) -> None:
    if parser == "serve-env":
        from agentenv.integrations.serve_env.limits import EnvServerLimits
        from agentenv.integrations.serve_env.runner import serve as run_server

        app = ConstantApp(answer_bodies(batch))
        run_server(app, "127.0.0.1", port, EnvServerLimits(), log_level="error")
        return
    import uvloop

    protocol = HttpToolsFloor if parser == "httptools" else BareFloor
    protocol.answers = responses(answer_bodies(batch))

    async def run() -> None:
        server = await asyncio.get_running_loop().create_server(protocol, "127.0.0.1", port)
        async with server:
            await server.serve_forever()

    uvloop.run(run())


class FloorServer:
    def __init__(self, parser: str, batch: int) -> None:
        self.port = free_port()
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", parser, str(batch), str(self.port)]
        )
        wait_ready(self.port, self.proc)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


# -- the run ------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0, help="measured seconds per case")
    parser.add_argument("--settle", type=float, default=0.5, help="unmeasured seconds first")
    parser.add_argument(
        "--parsers",
        default="httptools,bare,serve-env",
        help="comma-separated: httptools, bare, serve-env (its HTTP layer over a constant app)",
    )
    parser.add_argument(
        "--rate",
        type=float,
        default=3000.0,
        help="also one trajectory a request paced at this many requests/s in all (about "
        "serve-env's own closed-loop rate here, where the floor per request is higher than at "
        "the floor's own rate: fewer requests share each wake-up); 0: no such case",
    )
    parser.add_argument("--serve", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve[0], int(args.serve[1]), int(args.serve[2]))
        return
    print_machine("HTTP/1.1 floor on uvloop + httptools, serve-env's client pattern, loopback")
    media, in_process = media_workload()
    parsers = args.parsers.split(",")
    servers = {(p, b): FloorServer(p, b) for p in parsers for b in ANSWER_SIZES}
    cases = [(p, b, 0.0) for p, b in servers]
    if args.rate > 0:
        cases += [(p, 1, args.rate) for p in parsers]
    cpu = {case: [0.0, 0, 0] for case in cases}  # CPU s, requests, episodes
    rates: dict[tuple[str, int, float], list[float]] = {case: [] for case in cases}
    in_cpu: list[float] = []
    try:
        for round_ in range(args.passes + 1):  # round 0 warms up
            _, in_cpu_s = in_process(args.seconds, 1)
            if round_:
                in_cpu.append(in_cpu_s)
            for name, batch, rate in cases:
                server = servers[(name, batch)]
                result = drive(
                    server.port,
                    media,
                    batch=batch,
                    finish=batch == 1,
                    seconds=args.seconds,
                    settle=args.settle,
                    tag=f"p{round_}-{rate:g}",
                    rate=rate,
                    server_pid=server.proc.pid,
                )
                if result.failures:
                    raise SystemExit(f"{name}, {batch}: {sorted(set(result.failures))[:3]}")
                if round_:
                    figures = cpu[(name, batch, rate)]
                    figures[0] += result.front_cpu_s
                    figures[1] += result.requests
                    figures[2] += result.episodes
                    rates[(name, batch, rate)].append(result.requests / result.seconds)
    finally:
        for server in servers.values():
            server.stop()
    print(f"# load average at the end: {[round(x, 2) for x in os.getloadavg()]}")
    in_us = statistics.median(in_cpu) * 1e6
    print(
        f"in-process MediaSearch loop (reset, search, answer), 1 env: {in_us:.0f} us CPU per "
        f"episode (median of {args.passes} passes x {args.seconds:g} s)"
    )
    for (name, batch, rate), (cpu_s, requests, episodes) in cpu.items():
        per_request = cpu_s / max(requests, 1) * 1e6
        per_episode = cpu_s / max(episodes, 1) * 1e6
        budget = BUDGETS[batch] * in_us
        shape = (
            "1 trajectory a request + finish" if batch == 1 else f"{batch} trajectories a request"
        )
        if rate:
            shape += f", paced at {rate:,.0f} requests/s"
        print(
            f"floor, {name}, {shape}: {statistics.median(rates[(name, batch, rate)]):,.0f} "
            f"requests/s; {per_request:.1f} us CPU per request, {requests / max(episodes, 1):.3g} "
            f"requests per episode -> {per_episode:.0f} us per episode; budget "
            f"{BUDGETS[batch]:g}x = {budget:.0f} us: floor {per_episode / budget:.0%} of it, "
            f"{budget - per_episode:.0f} us above the floor, {budget - per_episode - in_us:.0f} us "
            f"for the app after the env's own {in_us:.0f}"
        )


if __name__ == "__main__":
    main()
