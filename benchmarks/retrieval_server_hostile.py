"""The retrieval server under hostile and failing conditions: does it keep serving?

Two scenes, both against the real ``serve-retrieval`` (BM25 over the film
catalog) in a child process, loopback only, each bounded in time:

1. Idle flood: ``--idle`` connections (1,030 by default, just over the
   server's 1,024-connection cap) connect and send nothing, ``--slowloris``
   more send header bytes one at a time, and every one that the server
   closes reconnects (at most ``--reconnect-rate`` a second), while
   ``--clients`` legitimate keep-alive clients search in a closed loop for
   ``--seconds``. Printed: the legitimate clients' successes, failures
   (any non-200 answer or dropped connection) and latency percentiles, and
   the server's connection counters (evictions, timeouts).
2. Dead worker: ``--workers`` (2) server processes under the same legitimate
   load; one is killed with SIGKILL. Printed: requests that failed, and the
   time from the kill until the replacement worker answers.
3. Greedy clients: one legitimate client (one short query per request, closed
   loop) beside 0, 1, 2 and 4 clients that each send requests at the limits
   (256 queries of 2,048 characters, k=100) in a closed loop, ``--greedy-seconds``
   each. Printed: the legitimate client's p50 and p99, and their ratio to the
   run without greedy clients (the budget: p99 <= 50 ms on loopback).

4. serve-env under the idle flood: scene 1 against ``agentenv serve-env MediaSearch-v0
   --protocol verl-tool`` (the same connection guard), the legitimate clients each playing
   one-step episodes (a new trajectory id per request, answered and graded).
5. serve-env beside greedy and malformed clients: one legitimate client (one-step episodes,
   closed loop) beside 0, 1, 2 and 3 clients sending requests at serve-env's limits (256
   trajectories, each a 16,000-character final answer to grade, just under the 4 MiB body
   cap), then beside 4 clients sending malformed bodies (each one JSON error, one log line).
6. serve-env beside the partial-name flood: one legitimate client (one-step episodes, from
   127.0.0.1) beside 0, 1 and 2 clients, each from its own loopback address (127.0.0.2, ...),
   stepping 256 trajectories a request with 32 ``find_person("john")`` calls an action.
   One server per worker count of ``--partial-workers`` (one process and ``--workers 2`` by
   default), the whole set ``--repeats`` times; the load average is printed beside each figure.
7. serve-env with its cap filled by a client that never finishes: a client (127.0.0.9) starts
   trajectories until refused and walks away; then a legitimate client starts one-step episodes.
8. the OpenEnv server beside the partial-name flood: one legitimate session (reset, then a final
   answer) beside 0, 1 and 2 clients each stepping ``--openenv-sessions`` sessions with 32
   ``find_person("john")`` calls an action; latency per message.
9. the OpenEnv server with its cap (64) filled by a client that opened sessions and never
   finished them (its sockets left open); then a legitimate client opens a session per episode.

Before this server guarded its connections, scene 1 left every legitimate
request with a 503 for as long as the idle sockets stayed open, and scene 2
stopped the whole server.

Usage:
    python benchmarks/retrieval_server_hostile.py             # full: 30 s of flood
    python benchmarks/retrieval_server_hostile.py --seconds 3 # quick look
    python benchmarks/retrieval_server_hostile.py --scenes 4,5 --seconds 10 --greedy-seconds 4  # serve-env
    python benchmarks/retrieval_server_hostile.py --scenes 4,5 --serve-env-workers 2  # serve-env --workers 2
    python benchmarks/retrieval_server_hostile.py --scenes 6,7 --greedy-seconds 6 [--serve-env-workers 2]
    python benchmarks/retrieval_server_hostile.py --scenes 6,8 --partial-hogs 0,1 --repeats 2  # issue 47
    python benchmarks/retrieval_server_hostile.py --scenes 7,9  # a cap filled by a client that never finishes
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import functools
import heapq
import json
import os
import resource
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np
from retrieval_server import _complete, encode_requests, free_port, sample_queries, wait_ready


@dataclasses.dataclass(frozen=True)
class Args:
    seconds: float = 30.0
    """Duration of the idle flood, and of the load after the kill in scene 2 (at most 10 s)."""
    idle: int = 1030
    """Connections that connect and send nothing."""
    slowloris: int = 30
    """Connections that send header bytes one at a time, one byte a second each."""
    reconnect_rate: float = 200.0
    """Most reconnections a second of hostile sockets the server closed."""
    clients: int = 64
    """Legitimate keep-alive clients, one request in flight each."""
    flood_workers: int = 1
    """Server processes in scene 1 (one process holds every connection: the hard case)."""
    workers: int = 2
    """Server processes in scene 2."""
    greedy_seconds: float = 8.0
    """Duration of each run of scene 3."""
    scenes: str = "1,2,3,4,5"
    """Which scenes to run (comma-separated); 4 to 9 are serve-env's (6 to 9 only when asked)."""
    serve_env_workers: int = 1
    """serve-env's worker processes in scenes 4, 5 and 7 (``--workers``; 1: one process)."""
    partial_workers: str = "1,2"
    """Scene 6: the serve-env worker counts to run, one server each, in this order, every repeat."""
    partial_hogs: str = "0,1,2"
    """Scenes 6 and 8: how many greedy clients beside the legit one, in turn."""
    repeats: int = 1
    """Scenes 6 and 8: times to run the whole set, so the spread between runs shows."""
    openenv_sessions: int = 32
    """Scene 8: WebSocket sessions each greedy OpenEnv client keeps stepping."""
    seed: int = 0


def server_command(port: int, workers: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "agentenv.cli.serve_retrieval",
        "--corpus",
        "media",
        "--backend",
        "bm25",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        str(workers),
    ]


def raise_fd_limit(needed: int) -> None:
    """Each socket is a descriptor, here and in the server (a child inherits the limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(needed, hard), hard))


@dataclasses.dataclass
class _Legit:
    sock: socket.socket | None
    index: int
    next_request: int
    buf: bytes = b""
    sent_at: float = 0.0


class Load:
    """Legitimate closed-loop clients plus hostile sockets, on one selector (one thread).

    A legitimate client whose connection drops, or that gets a non-200, counts
    a failure and reconnects; a hostile socket that the server closes
    reconnects within the reconnect budget.
    """

    def __init__(self, port: int, requests: list[bytes], clients: int) -> None:
        self.port = port
        self.requests = requests
        self.sel = selectors.DefaultSelector()
        self.latencies: list[float] = []
        self.failures: list[str] = []
        self.answered_at: list[float] = []
        self.legit = [_Legit(None, c, c * 997) for c in range(clients)]
        self.hostile = 0
        self.reconnects = 0
        self._reconnect_due: list[float] = []
        self._slow: list[tuple[float, int]] = []  # (next byte due, fileno)
        self._slow_socks: dict[int, socket.socket] = {}

    def _connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        return sock

    def add_idle(self, n: int) -> None:
        for _ in range(n):
            sock = self._connect()
            self.sel.register(sock, selectors.EVENT_READ, ("idle", sock))
            self.hostile += 1

    def add_slowloris(self, n: int, now: float) -> None:
        for i in range(n):
            sock = self._connect()
            sock.send(b"POST /search HTTP/1.1\r\nHost: x\r\n")
            self.sel.register(sock, selectors.EVENT_READ, ("slow", sock))
            self._slow_socks[sock.fileno()] = sock
            heapq.heappush(self._slow, (now + 1.0 + i / max(n, 1), sock.fileno()))
            self.hostile += 1

    def _send(self, conn: _Legit, now: float) -> None:
        if conn.sock is None:
            try:
                conn.sock = self._connect()
            except OSError as exc:
                self.failures.append(f"connect: {type(exc).__name__}")
                return
            self.sel.register(conn.sock, selectors.EVENT_READ, ("legit", conn))
        conn.sent_at = now
        conn.buf = b""
        try:
            conn.sock.sendall(self.requests[conn.next_request % len(self.requests)])
        except OSError as exc:
            self._fail(conn, f"send: {type(exc).__name__}")
            return
        conn.next_request += 1

    def _fail(self, conn: _Legit, why: str) -> None:
        self.failures.append(why)
        if conn.sock is not None:
            self.sel.unregister(conn.sock)
            conn.sock.close()
            conn.sock = None

    def run(self, seconds: float, reconnect_rate: float, on_tick: object = None) -> None:
        """Drive everything for ``seconds``; ``on_tick(now)`` is called each loop."""
        start = time.perf_counter()
        stop_at = start + seconds
        budget_at = start
        for conn in self.legit:
            self._send(conn, time.perf_counter())
        while True:
            now = time.perf_counter()
            if now >= stop_at:
                break
            if callable(on_tick):
                on_tick(now)
            for conn in self.legit:  # reconnect clients whose connection failed
                if conn.sock is None:
                    self._send(conn, now)
            while self._slow and self._slow[0][0] <= now:
                _, fd = heapq.heappop(self._slow)
                sock = self._slow_socks.get(fd)
                if sock is not None:
                    try:
                        sock.send(b"X")
                        heapq.heappush(self._slow, (now + 1.0, fd))
                    except OSError:
                        pass
            # Hostile sockets the server closed come back, within the budget.
            while self._reconnect_due and budget_at <= now:
                kind = self._reconnect_due.pop()
                budget_at = max(budget_at, now - 1.0) + 1.0 / reconnect_rate
                self.reconnects += 1
                try:
                    if kind == "slow":
                        self.add_slowloris(1, now)
                    else:
                        self.add_idle(1)
                except OSError:
                    continue
                self.hostile -= 1
            for key, _ in self.sel.select(0.01):
                kind, obj = key.data
                if kind == "legit":
                    self._on_legit(obj)
                else:
                    self._on_hostile(kind, obj)
        for key in list(self.sel.get_map().values()):
            key.fileobj.close()

    def _on_legit(self, conn: _Legit) -> None:
        assert conn.sock is not None
        try:
            data = conn.sock.recv(65536)
        except OSError as exc:
            self._fail(conn, f"recv: {type(exc).__name__}")
            return
        if not data:
            self._fail(conn, "connection closed by server")
            return
        conn.buf += data
        done, status = _complete(conn.buf)
        if not done:
            return
        finished = time.perf_counter()
        self.latencies.append(finished - conn.sent_at)
        self.answered_at.append(finished)
        if not status.startswith(b"HTTP/1.1 200"):
            self.failures.append(status.decode(errors="replace"))
        self._send(conn, finished)

    def _on_hostile(self, kind: str, sock: socket.socket) -> None:
        try:
            data = sock.recv(65536)
        except OSError:
            data = b""
        if data:
            return  # a 408 answer; the close follows
        self.sel.unregister(sock)
        self._slow_socks.pop(sock.fileno(), None)
        sock.close()
        self._reconnect_due.append(kind)


def info_over_new_connection(port: int) -> dict:
    from agentenv.retrieval.client import RetrievalClient

    client = RetrievalClient(f"http://127.0.0.1:{port}", retries=0, timeout_s=2.0)
    try:
        return client.info()
    finally:
        client.close()


def summary(load: Load, seconds: float) -> str:
    lat = np.sort(np.asarray(load.latencies)) * 1000.0
    ok = len(lat) - sum(1 for f in load.failures if f.startswith("HTTP/"))
    text = (
        f"legit clients: {ok} successful requests ({ok / seconds:,.0f}/s), "
        f"{len(load.failures)} failed"
    )
    if len(lat):
        text += (
            f"; latency ms p50 {np.percentile(lat, 50):.2f} p99 {np.percentile(lat, 99):.2f} "
            f"max {lat[-1]:.2f}"
        )
    if load.failures:
        kinds = collections.Counter(load.failures).most_common(3)
        text += " (" + ", ".join(f"{n}× {kind}" for kind, n in kinds) + ")"
    return text


def scene_flood(
    args: Args, requests: list[bytes], command: list[str] | None = None, title: str = "scene 1"
) -> None:
    port = free_port()
    proc = subprocess.Popen(command(port) if command else server_command(port, args.flood_workers))
    try:
        wait_ready(port, proc)
        reference_s = min(args.seconds, 10.0)
        calm = Load(port, requests, args.clients)
        calm.run(reference_s, args.reconnect_rate)
        print(
            f"reference, no hostile connections, {reference_s:g} s:\n  "
            + summary(calm, reference_s)
        )
        load = Load(port, requests, args.clients)
        load.add_idle(args.idle)
        load.add_slowloris(args.slowloris, time.perf_counter())
        print(
            f"{title}: {args.idle} idle + {args.slowloris} slowloris connections "
            f"(reconnecting, <= {args.reconnect_rate:g}/s) and {args.clients} legit clients, "
            f"{args.seconds:g} s, {args.flood_workers} server process(es)"
        )
        load.run(args.seconds, args.reconnect_rate)
        info = info_over_new_connection(port)
    finally:
        proc.terminate()
        proc.wait(10)
    print("  " + summary(load, args.seconds))
    conns = info.get("connections", {})
    print(
        f"  hostile reconnections: {load.reconnects}; server (one worker's counters): "
        + ", ".join(f"{k} {v}" for k, v in conns.items())
    )


def scene_dead_worker(args: Args, requests: list[bytes]) -> None:
    port = free_port()
    proc = subprocess.Popen(server_command(port, args.workers), stderr=subprocess.PIPE)
    after_s = min(args.seconds, 10.0)
    try:
        wait_ready(port, proc)
        pids: set[int] = set()
        for _ in range(200):
            pids.add(info_over_new_connection(port)["pid"])
            if len(pids) == args.workers:
                break
        victim = min(pids)
        load = Load(port, requests, args.clients)
        state: dict[str, float] = {}
        recovered = threading.Event()

        def probe() -> None:  # new connections until one lands on the replacement
            while not recovered.is_set() and time.perf_counter() - state["kill"] < after_s:
                try:
                    pid = info_over_new_connection(port)["pid"]
                except Exception:  # noqa: BLE001 - a probe that hits the dying worker
                    continue
                if pid not in pids:
                    state["recovered"] = time.perf_counter()
                    recovered.set()
                time.sleep(0.002)

        def tick(now: float) -> None:
            if "kill" not in state and now - load_start >= 2.0:
                state["kill"] = time.perf_counter()
                state["failures_before"] = len(load.failures)
                os.kill(victim, signal.SIGKILL)
                threading.Thread(target=probe, daemon=True).start()

        load_start = time.perf_counter()
        load.run(2.0 + after_s, args.reconnect_rate, tick)
        recovered.wait(1.0)
    finally:
        proc.terminate()
        proc.wait(10)
        stderr = proc.stderr.read().decode() if proc.stderr else ""
    print(
        f"scene 2: {args.workers} server processes, {args.clients} legit clients; worker "
        f"{victim} killed (SIGKILL) after 2 s, then {after_s:g} s more"
    )
    print("  " + summary(load, 2.0 + after_s))
    after = [t for t in load.answered_at if t >= state["kill"]]
    print(
        f"  failed requests after the kill: {len(load.failures) - int(state['failures_before'])}"
        f"; answered after the kill: {len(after)}"
    )
    if "recovered" in state:
        print(
            f"  time to recover (kill → replacement worker answering): "
            f"{(state['recovered'] - state['kill']) * 1000:.0f} ms"
        )
    else:
        print("  the replacement worker did not answer in time")
    gaps = np.diff([state["kill"], *after]) if after else np.asarray([after_s])
    print(f"  longest pause in answers after the kill: {gaps.max() * 1000:.1f} ms")
    restarted = [line for line in stderr.splitlines() if "restarting" in line]
    print(f"  supervisor: {restarted[0] if restarted else 'no restart logged'}")


def _post(conn: object, body: bytes, path: str = "/search") -> None:
    conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})  # type: ignore[attr-defined]
    response = conn.getresponse()  # type: ignore[attr-defined]
    response.read()
    if response.status != 200:
        raise RuntimeError(f"HTTP {response.status}")


def greedy_body(rng: np.random.Generator) -> bytes:
    """A request at the documented limits: 256 queries of 2,048 characters of catalog words, k=100."""
    words = [w for w in " ".join(sample_queries(rng, 4096)).split() if w.isascii()]
    queries = []
    for _ in range(256):
        picked = rng.choice(words, size=600)
        queries.append(" ".join(picked)[:2048])
    return json.dumps({"queries": queries, "k": 100}).encode()


def legit_latencies(
    port: int,
    queries: list[str],
    seconds: float,
    greedy: int,
    body: object,
    legit_body: object = None,
    path: str = "/search",
) -> np.ndarray:
    """The legitimate client's latencies (s) beside ``greedy`` clients sending ``body`` (or ``body()``) in a closed loop.

    ``legit_body(i)`` is the legitimate client's i-th request body (default: one query of ``queries``).
    """
    import http.client

    stop = threading.Event()

    def hog() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while not stop.is_set():
            try:
                _post(conn, body() if callable(body) else body, path)
            except Exception:  # noqa: BLE001 - a refused (or malformed) greedy request tries again
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                time.sleep(0.05)
        conn.close()

    threads = [threading.Thread(target=hog, daemon=True) for _ in range(greedy)]
    for thread in threads:
        thread.start()
    time.sleep(0.5 if greedy else 0.0)  # the greedy requests are queued before measuring
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    latencies = []
    end = time.perf_counter() + seconds
    i = 0
    while time.perf_counter() < end:
        if callable(legit_body):
            payload = legit_body(i)
        else:
            payload = json.dumps({"queries": [queries[i % len(queries)]], "k": 10}).encode()
        began = time.perf_counter()
        _post(conn, payload, path)
        latencies.append(time.perf_counter() - began)
        i += 1
    stop.set()
    conn.close()
    for thread in threads:
        thread.join(60)
    return np.asarray(latencies)


def scene_greedy(args: Args, rng: np.random.Generator) -> None:
    port = free_port()
    proc = subprocess.Popen(server_command(port, 1))
    queries = sample_queries(rng, 2048)
    body = greedy_body(rng)
    try:
        wait_ready(port, proc)
        print(
            f"scene 3: one legit client (1 query, k=10, closed loop) beside clients at the limits "
            f"(256 x 2,048 chars, k=100), {args.greedy_seconds:g} s each, 1 server process"
        )
        base = None
        for greedy in (0, 1, 2, 4):
            lat = legit_latencies(port, queries, args.greedy_seconds, greedy, body) * 1000.0
            p50, p99 = np.percentile(lat, 50), np.percentile(lat, 99)
            if base is None:
                base = (p50, p99)
            print(
                f"  {greedy} greedy: {len(lat):,} requests, p50 {p50:.2f} ms ({p50 / base[0]:.1f}x), "
                f"p99 {p99:.2f} ms ({p99 / base[1]:.1f}x){'' if p99 <= 50 else '  OVER the 50 ms budget'}"
            )
    finally:
        proc.terminate()
        proc.wait(10)


def serve_env_command(port: int, workers: int = 1) -> list[str]:
    """The real ``agentenv serve-env`` (verl-tool protocol) over MediaSearch-v0, with ``workers`` processes."""
    return [
        sys.executable,
        "-m",
        "agentenv.cli.main",
        "serve-env",
        "MediaSearch-v0",
        "--protocol",
        "verl-tool",
        "--split",
        "train",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--log-level",
        "error",
        "--workers",
        str(workers),
    ]


def episode_body(tag: str, i: int) -> bytes:
    """A one-step episode: a new trajectory id whose action is a final answer (started, graded, ended)."""
    return json.dumps(
        {
            "trajectory_ids": [f"{tag}-{i}"],
            "actions": ["<answer>Inception</answer>"],
            "extra_fields": [{"index": i % 1000}],
        }
    ).encode()


def serve_env_requests(tag: str, n: int) -> list[bytes]:
    """``n`` pre-encoded one-step episodes (distinct ids; ``Load`` gives client c the ones from c x 997)."""
    out = []
    for i in range(n):
        body = episode_body(tag, i)
        out.append(
            b"POST /get_observation HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
            b"\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        )
    return out


def serve_env_greedy_body(rng: np.random.Generator) -> object:
    """Requests at serve-env's limits: 256 new trajectories each, each a 16,000-character final answer.

    The answers are graded (the costliest step: any action up to 32 K is parsed and graded) and
    end their episodes, so a greedy client holds no trajectory. Returns a function giving a body
    with new trajectory ids on every call (the same ids again would only get "has ended").
    """
    words = [w for w in " ".join(sample_queries(rng, 4096)).split() if w.isascii() and w.isalnum()]
    actions = [
        "<answer>" + " ".join(rng.choice(words, size=4000))[:15980] + "</answer>"
        for _ in range(256)
    ]
    tail = b', "actions": ' + json.dumps(actions).encode() + b"}"
    calls = iter(range(1 << 62))

    def body() -> bytes:
        call = next(calls)
        return (
            b'{"trajectory_ids": '
            + json.dumps([f"greedy-{call}-{i}" for i in range(256)]).encode()
            + tail
        )

    return body


def scene_serve_env_greedy(args: Args, rng: np.random.Generator) -> None:
    port = free_port()
    proc = subprocess.Popen(serve_env_command(port, args.serve_env_workers))
    greedy = serve_env_greedy_body(rng)
    malformed = b'{"trajectory_ids": ["x"], "actions": [' + b"[" * 5000 + b"]" * 5000 + b"]}"
    counter = iter(range(1 << 62))
    try:
        wait_ready(port, proc)
        print(
            f"scene 5: serve-env; one legit client (one-step episodes, closed loop) beside clients at the "
            f"limits ({len(greedy()):,}-byte requests of 256 new trajectories), {args.greedy_seconds:g} s each"
        )
        base = None
        # Three, not four: four requests of 256 new trajectories in flight reach max_live_envs (1,024),
        # and a new trajectory then gets 503 with Retry-After until slots free (the cap at work).
        runs = [(n, greedy, f"{n} greedy") for n in (0, 1, 2, 3)] + [(4, malformed, "4 malformed")]
        for n, body, label in runs:
            lat = (
                legit_latencies(
                    port,
                    [],
                    args.greedy_seconds,
                    n,
                    body,
                    legit_body=lambda i: episode_body(f"legit-{next(counter)}", i),
                    path="/get_observation",
                )
                * 1000.0
            )
            p50, p99 = np.percentile(lat, 50), np.percentile(lat, 99)
            if base is None:
                base = (p50, p99)
            print(
                f"  {label}: {len(lat):,} episodes, p50 {p50:.2f} ms ({p50 / base[0]:.1f}x), "
                f"p99 {p99:.2f} ms ({p99 / base[1]:.1f}x)"
            )
        info = info_over_new_connection(port)
        print(
            f"  server: {info['live_trajectories']} live trajectories; "
            + ", ".join(f"{k} {v}" for k, v in info["stats"].items())
        )
    finally:
        proc.terminate()
        proc.wait(10)


FLOOD_ACTION = '<tool_call>{"name": "find_person", "arguments": {"name": "john"}}</tool_call>' * 32
"""An action at the limits of one step: 32 partial-name look-ups of the commonest first name."""


def _post_json(conn: object, body: bytes) -> tuple[int, dict]:
    conn.request(
        "POST", "/get_observation", body=body, headers={"Content-Type": "application/json"}
    )  # type: ignore[attr-defined]
    response = conn.getresponse()  # type: ignore[attr-defined]
    data = response.read()
    return response.status, (json.loads(data) if response.status == 200 else {})


def partial_name_hog(port: int, stop: object, ready: object, source: str, tag: str) -> None:
    """A greedy client from ``source``: 256 trajectories a request, each stepped with
    :data:`FLOOD_ACTION` until its episode ends, then finished and replaced, in a closed loop.
    Sets ``ready`` after its first answer (its envs are built). Runs in its own process, so that
    reading its 13 MB answers does not hold the measuring client's interpreter."""
    import http.client

    def connect() -> http.client.HTTPConnection:
        return http.client.HTTPConnection(
            "127.0.0.1", port, timeout=120, source_address=(source, 0)
        )

    conn, generation = connect(), 0
    while not stop.is_set():  # type: ignore[attr-defined]
        ids = [f"{tag}-{generation}-{i}" for i in range(256)]
        body = json.dumps(
            {
                "trajectory_ids": ids,
                "actions": [FLOOD_ACTION] * 256,
                "extra_fields": [{"index": i} for i in range(256)],
            }
        ).encode()
        try:
            status, answer = _post_json(conn, body)
            if status != 200:
                time.sleep(0.05)
                continue
            ready.set()  # type: ignore[attr-defined]
            if any(answer["dones"]):
                finish = {"trajectory_ids": ids, "actions": [""] * 256, "finish": [True] * 256}
                _post_json(conn, json.dumps(finish).encode())
                generation += 1
        except Exception:  # noqa: BLE001 - a dropped greedy connection tries again
            conn.close()
            conn = connect()
            time.sleep(0.05)
    conn.close()


def legit_beside(port: int, seconds: float, hogs: int, tag: str) -> tuple[np.ndarray, int, float]:
    """The legitimate client's one-step episodes (from 127.0.0.1) beside ``hogs`` partial-name
    greedy clients (each a process from its own loopback address), measured once every greedy
    client has had its first answer; (latencies in s, refused answers, seconds the greedy
    clients' first requests took: building their 256 envs each)."""
    import http.client
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    stop = ctx.Event()
    readies = [ctx.Event() for _ in range(hogs)]
    procs = [
        ctx.Process(
            target=partial_name_hog,
            args=(port, stop, readies[h], f"127.0.0.{2 + h}", f"{tag}-g{h}"),
            daemon=True,
        )
        for h in range(hogs)
    ]
    began_hogs = time.perf_counter()
    for proc in procs:
        proc.start()
    for ready in readies:
        ready.wait(120)
    warmup = time.perf_counter() - began_hogs
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    latencies, refused, i = [], 0, 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        began = time.perf_counter()
        status, _ = _post_json(conn, episode_body(f"{tag}-legit", i))
        if status == 200:
            latencies.append(time.perf_counter() - began)
        else:
            refused += 1
        i += 1
    stop.set()
    conn.close()
    for proc in procs:
        proc.join(120)
        if proc.is_alive():
            proc.kill()
    return np.asarray(latencies), refused, warmup


def scene_serve_env_partial_names(args: Args) -> None:
    """Scene 6: the partial-name flood (32 find_person("john") an action, 256 actions a request),
    on one server per worker count of ``--partial-workers``, all of them ``--repeats`` times."""
    print(
        f"scene 6: serve-env; one legit client (one-step episodes, closed loop, 127.0.0.1) beside "
        f"clients each from its own loopback address sending 256 actions of 32 find_person('john') "
        f"a request, {args.greedy_seconds:g} s each"
    )
    for repeat in range(args.repeats):
        for workers in [int(w) for w in args.partial_workers.split(",")]:
            port = free_port()
            proc = subprocess.Popen(serve_env_command(port, workers))
            try:
                wait_ready(port, proc)
                base = None
                for hogs in [int(h) for h in args.partial_hogs.split(",")]:
                    load = os.getloadavg()[0]
                    lat, refused, warmup = legit_beside(
                        port, args.greedy_seconds, hogs, f"s6-{repeat}-{hogs}"
                    )
                    lat = lat * 1000.0
                    p50, p99 = np.percentile(lat, 50), np.percentile(lat, 99)
                    if base is None:
                        base = (p50, p99)
                    print(
                        f"  run {repeat + 1}, --workers {workers}, {hogs} greedy: {len(lat):,} "
                        f"episodes ({refused} refused), p50 {p50:.2f} ms ({p50 / base[0]:.1f}x), "
                        f"p99 {p99:.2f} ms ({p99 / base[1]:.1f}x)"
                        f"{'' if p99 <= 50 else '  OVER the 50 ms budget'}; load {load:.1f}"
                        f"{f'; measured after the greedy first answers ({warmup:.1f} s)' if hogs else ''}",
                        flush=True,
                    )
                info = info_over_new_connection(port)
                print(
                    f"  server: {info['live_trajectories']} live trajectories; "
                    + ", ".join(f"{k} {v}" for k, v in info["stats"].items())
                )
            finally:
                proc.terminate()
                proc.wait(10)


def scene_serve_env_walker(args: Args, cap: int = 64) -> None:
    """Scene 7: a client fills ``max_live_envs`` and walks away; can another client still start?"""
    import http.client

    port = free_port()
    proc = subprocess.Popen(
        [*serve_env_command(port, args.serve_env_workers), "--max-live-envs", str(cap)]
    )
    try:
        wait_ready(port, proc)
        walker = http.client.HTTPConnection(
            "127.0.0.1", port, timeout=60, source_address=("127.0.0.9", 0)
        )
        started, generation = 0, 0
        while True:  # start trajectories (one search step each) until the server refuses
            ids = [f"walker-{generation}-{i}" for i in range(16)]
            search = '<tool_call>{"name": "search", "arguments": {"query": "heat"}}</tool_call>'
            body = {"trajectory_ids": ids, "actions": [search] * 16, "extra_fields": [{}] * 16}
            status, _ = _post_json(walker, json.dumps(body).encode())
            if status != 200:
                break
            started += 16
            generation += 1
        walker.close()  # and never finishes them
        lat, refused, _ = legit_beside(port, min(args.greedy_seconds, 4.0), 0, "s7")
        info = info_over_new_connection(port)
        print(
            f"scene 7: serve-env (--workers {args.serve_env_workers}, --max-live-envs {cap}); a client "
            f"started {started} trajectories and walked away; then a legit client's one-step "
            f"episodes: {len(lat):,} served, {refused} refused (503), p50 "
            f"{np.percentile(lat, 50) * 1000:.2f} ms, p99 {np.percentile(lat, 99) * 1000:.2f} ms; "
            f"server: {info['live_trajectories']} live, taken back {info['stats'].get('taken_back')}"
            if len(lat)
            else f"scene 7: the legit client was refused {refused} times and served none"
        )
    finally:
        proc.terminate()
        proc.wait(10)


def openenv_command(port: int, cap: int | None = None) -> list[str]:
    """The real ``agentenv serve-env --protocol openenv`` over MediaSearch-v0."""
    command = serve_env_command(port)
    command[command.index("verl-tool")] = "openenv"
    command = command[: command.index("--workers")]
    return command + (["--max-live-envs", str(cap)] if cap else [])


def ws_session(port: int, source: str) -> object:
    """An OpenEnv WebSocket session from loopback address ``source``."""
    from websockets.sync.client import connect

    sock = socket.create_connection(("127.0.0.1", port), source_address=(source, 0))
    return connect(f"ws://127.0.0.1:{port}/ws", sock=sock, max_size=None)


def ws_ask(ws: object, kind: str, data: dict) -> dict:
    ws.send(json.dumps({"type": kind, "data": data}))  # type: ignore[attr-defined]
    return json.loads(ws.recv(timeout=120))  # type: ignore[attr-defined]


def openenv_hog(port: int, stop: object, ready: object, source: str, sessions: int) -> None:
    """A greedy OpenEnv client from ``source``: ``sessions`` sessions (a thread each) stepping
    :data:`FLOOD_ACTION` until their episode ends, then reset, in a closed loop. Sets ``ready``
    once every session has stepped once. Its own process, as :func:`partial_name_hog`."""
    stepped = threading.Barrier(sessions + 1)

    def one(i: int) -> None:
        first = True
        try:
            with ws_session(port, source) as ws:
                while not stop.is_set():  # type: ignore[attr-defined]
                    ws_ask(ws, "reset", {"index": i})
                    while not stop.is_set():  # type: ignore[attr-defined]
                        answer = ws_ask(ws, "step", {"text": FLOOD_ACTION})
                        if first:
                            first = False
                            stepped.wait(120)
                        if answer.get("data", {}).get("done", True):
                            break
        except Exception:  # noqa: BLE001 - the scene ends by closing the server
            pass

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(sessions)]
    for thread in threads:
        thread.start()
    stepped.wait(300)
    ready.set()  # type: ignore[attr-defined]
    for thread in threads:
        thread.join()


def openenv_legit_beside(
    port: int, seconds: float, hogs: int, sessions: int
) -> tuple[np.ndarray, float]:
    """The legit client's messages (reset, then a final answer: one-step episodes, one session
    from 127.0.0.1) beside ``hogs`` greedy OpenEnv clients; (latencies in s, warm-up seconds)."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    stop = ctx.Event()
    readies = [ctx.Event() for _ in range(hogs)]
    procs = [
        ctx.Process(
            target=openenv_hog,
            args=(port, stop, readies[h], f"127.0.0.{2 + h}", sessions),
            daemon=True,
        )
        for h in range(hogs)
    ]
    began = time.perf_counter()
    for proc in procs:
        proc.start()
    for ready in readies:
        ready.wait(300)
    warmup = time.perf_counter() - began
    latencies, i = [], 0
    with ws_session(port, "127.0.0.1") as ws:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            for kind, data in (
                ("reset", {"index": i % 1000}),
                ("step", {"text": "<answer>Inception</answer>"}),
            ):
                t = time.perf_counter()
                answer = ws_ask(ws, kind, data)
                latencies.append(time.perf_counter() - t)
                assert answer["type"] == "observation", answer
            i += 1
    stop.set()
    for proc in procs:
        proc.join(30)
        if proc.is_alive():
            proc.kill()
    return np.asarray(latencies), warmup


def scene_openenv_partial_names(args: Args) -> None:
    """Scene 8: scene 6 on the OpenEnv server (each greedy client steps ``--openenv-sessions``
    sessions with 32 find_person("john") an action)."""
    print(
        f"scene 8: serve-env --protocol openenv; one legit session (reset, then a final answer, "
        f"closed loop, 127.0.0.1) beside clients each from its own loopback address stepping "
        f"{args.openenv_sessions} sessions with 32 find_person('john') an action, "
        f"{args.greedy_seconds:g} s each; latency per message"
    )
    for repeat in range(args.repeats):
        port = free_port()
        proc = subprocess.Popen(openenv_command(port))
        try:
            wait_ready(port, proc)
            base = None
            for hogs in [int(h) for h in args.partial_hogs.split(",")]:
                load = os.getloadavg()[0]
                lat, warmup = openenv_legit_beside(
                    port, args.greedy_seconds, hogs, args.openenv_sessions
                )
                lat = lat * 1000.0
                p50, p99 = np.percentile(lat, 50), np.percentile(lat, 99)
                if base is None:
                    base = (p50, p99)
                print(
                    f"  run {repeat + 1}, {hogs} greedy: {len(lat):,} messages, p50 {p50:.2f} ms "
                    f"({p50 / base[0]:.1f}x), p99 {p99:.2f} ms ({p99 / base[1]:.1f}x)"
                    f"{'' if p99 <= 50 else '  OVER the 50 ms budget'}; load {load:.1f}"
                    f"{f'; measured after every greedy session stepped ({warmup:.1f} s)' if hogs else ''}",
                    flush=True,
                )
        finally:
            proc.terminate()
            proc.wait(10)


def scene_openenv_walker(args: Args, cap: int = 64) -> None:
    """Scene 9: a client (127.0.0.9) opens ``cap`` OpenEnv sessions, resets each and never finishes
    (its sockets stay open); then a legit client opens a session per one-step episode."""
    import contextlib

    port = free_port()
    proc = subprocess.Popen(openenv_command(port, cap))
    walker: list[object] = []
    stack = contextlib.ExitStack()
    try:
        wait_ready(port, proc)
        while len(walker) < cap:
            ws = stack.enter_context(ws_session(port, "127.0.0.9"))  # type: ignore[arg-type]
            walker.append(ws)
            assert ws_ask(ws, "reset", {"index": len(walker)})["type"] == "observation"
        served, refused, latencies = 0, 0, []
        end = time.perf_counter() + min(args.greedy_seconds, 4.0)
        while time.perf_counter() < end:
            t = time.perf_counter()
            with ws_session(port, "127.0.0.1") as ws:
                first = ws_ask(ws, "reset", {"index": served % 1000})
                if first["type"] != "observation":
                    refused += 1
                    continue
                ws_ask(ws, "step", {"text": "<answer>Inception</answer>"})
            latencies.append(time.perf_counter() - t)
            served += 1
        closed = 0
        for ws in walker:  # which of the walker's sessions the server closed
            try:
                ws.ping().wait(2)  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001 - closed: the exception type is websockets'
                closed += 1
        lat = np.asarray(latencies) * 1000.0
        print(
            f"scene 9: serve-env --protocol openenv --max-live-envs {cap}; a client opened {cap} "
            f"sessions and never finished them; then a legit client's one-step episodes, a session "
            f"each: {served:,} served, {refused} refused"
            + (
                f", p50 {np.percentile(lat, 50):.2f} ms, p99 {np.percentile(lat, 99):.2f} ms "
                f"(connect, reset, answer, close); the walker's sessions closed: {closed}"
                if served
                else ""
            )
        )
    finally:
        stack.close()
        proc.terminate()
        proc.wait(10)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for field in dataclasses.fields(Args):
        parser.add_argument(
            f"--{field.name.replace('_', '-')}",
            dest=field.name,
            type=type(field.default),
            default=field.default,
        )
    ns = parser.parse_args(argv)
    args = Args(**{f.name: getattr(ns, f.name) for f in dataclasses.fields(Args)})
    raise_fd_limit(2 * (args.idle + args.slowloris + args.clients) + 256)
    rng = np.random.default_rng(args.seed)
    requests = encode_requests(sample_queries(rng, 4096), 10)
    scenes = set(args.scenes.split(","))
    if "1" in scenes:
        scene_flood(args, requests)
    if "2" in scenes:
        scene_dead_worker(args, requests)
    if "3" in scenes:
        scene_greedy(args, rng)
    if "4" in scenes:
        scene_flood(
            args,
            serve_env_requests("flood", 64 * 997 + 1024),
            functools.partial(serve_env_command, workers=args.serve_env_workers),
            "scene 4 (serve-env)",
        )
    if "5" in scenes:
        scene_serve_env_greedy(args, rng)
    if "6" in scenes:
        scene_serve_env_partial_names(args)
    if "7" in scenes:
        scene_serve_env_walker(args)
    if "8" in scenes:
        scene_openenv_partial_names(args)
    if "9" in scenes:
        scene_openenv_walker(args)
    print(json.dumps({"args": dataclasses.asdict(args)}))


if __name__ == "__main__":
    main()
