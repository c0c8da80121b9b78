"""Throughput and latency of the shared retrieval server under many clients.

Budget (DESIGN.md, "Performance budgets"): 64 concurrent clients on
loopback, 2 cores: >= 5,000 queries/s, p99 <= 20 ms, 0 failures.

Starts ``serve-retrieval --corpus media --backend bm25 --workers 2`` in a
child process, then drives it from this process with ``--clients``
keep-alive connections, each sending one query per request, as env workers
do. The load generator shares the cores with the server, so it is one
thread over non-blocking sockets and a selector, sending pre-encoded
requests and reading only the status line and Content-Length (tens of µs
per request, printed), where an asyncio or httpx client spends most of a
core.

What is printed, in order: the machine (cores, load average at the start:
on a shared machine every figure is only as good as that), a warm-up, then
``--passes`` passes of ``--seconds`` of load each, and a summary: the
median and spread (min-max) over passes of queries/s and of the p50, p90
and p99 latency, the latency percentiles and max of all passes pooled (the
budget's latency: from send until this process has read the answer), the
same stamped when the selector woke (the difference is this one-thread
generator reading other answers first), the failures, the budget ratios
(queries/s / 5,000 and pooled p99 / 20 ms) and the CPU per request. The
defaults (5 passes of 6 s) make 30 s of measured load.

``--against DIR`` measures another checkout in the same run: DIR holds its
``agentenv`` package (for example ``git worktree add /tmp/old HEAD~1``, or
``git archive REV | tar -x -C /tmp/old``). Both servers start once and
their passes alternate (A B, B A, ...), so load that comes and goes on a
shared machine falls on both: compare the two, not either with a figure
from another day.

Two modes:

- closed loop (default): every client sends its next query as soon as the
  last one is answered; measures the most the server can do. With C clients
  mean latency is C / throughput by Little's law, so latency here is mostly
  queueing, and the p99 shows how evenly the waiting is shared.
- paced (``--rate R``): clients send R queries/s in total on a fixed
  schedule; latency is measured from the scheduled send time, so a slow
  answer also counts against the requests it delays.

uvicorn must run with httptools and uvloop (``agentenv[server]`` installs
``uvicorn[standard]``); the line "http parser" says which it used.

Usage:
    python benchmarks/retrieval_server.py                # the budget figure: 5 x 6 s
    python benchmarks/retrieval_server.py --quick        # a look: 5 x 1 s
    python benchmarks/retrieval_server.py --against /tmp/old   # this checkout vs another
    python benchmarks/retrieval_server.py --rate 3000    # paced instead of closed loop
"""

from __future__ import annotations

import argparse
import dataclasses
import heapq
import json
import os
import selectors
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

BUDGET_QPS = 5000.0
BUDGET_P99_MS = 20.0
REPO = Path(__file__).resolve().parents[1]


@dataclasses.dataclass(frozen=True)
class Args:
    seconds: float = 6.0
    """Measured seconds of one pass; passes x seconds is the load behind the headline."""
    passes: int = 5
    """Measured passes per server, alternating between servers with --against."""
    warmup: float = 3.0
    """Seconds of unmeasured load per server before the first pass (caches, connections)."""
    settle: float = 0.5
    """Unmeasured seconds at the start of every pass, while its new connections fill up."""
    clients: int = 64
    """Concurrent keep-alive connections, each with at most one request in flight."""
    rate: float = 0.0
    """Offered queries/s over all clients; 0 = closed loop (as fast as answered)."""
    k: int = 10
    """Hits per query."""
    seed: int = 0
    """Seed of the query sampler."""
    port: int = 0
    """Server port; 0 picks a free loopback port."""
    workers: int = 2
    """Server processes (``serve-retrieval --workers``): one per core of the 2-core budget."""
    against: str = ""
    """Another checkout (a folder holding its agentenv package) measured in the same run."""
    against_python: str = ""
    """Interpreter for the --against server, e.g. a venv where that checkout is installed (default: this one)."""
    json: str = ""
    """Also write each server's summary figures to this file."""
    quick: bool = False
    """A quick look: 1 s passes, 1 s warm-up (figures are noisier; not the budget figure)."""


@dataclasses.dataclass
class Result:
    requests: int
    """Answers in the measured window."""
    latencies_ms: np.ndarray
    """From send until this process had read and checked the answer (the budget's latency)."""
    failures: list[str]
    answered: int = 0
    """Answers in the whole pass, settle included (for CPU per request)."""
    arrived_ms: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    """From send until the selector reported the answer readable: without the time this
    one-thread load generator spent on other answers of the same wake-up."""


def film_texts() -> list[str]:
    """The film catalog's documents, to draw query words from."""
    from agentenv.corpora.media.catalog import load_catalog

    return load_catalog().documents()[1]


def sample_queries(rng: np.random.Generator, n: int) -> list[str]:
    """Queries like an agent's: one to four words drawn from real film documents."""
    words = np.array(
        [w for text in film_texts()[:3000] for w in text.split() if w.isalpha() and len(w) > 2]
    )
    sizes = rng.integers(1, 5, size=n)
    return [" ".join(words[rng.integers(0, len(words), size=int(s))]) for s in sizes]


def encode_requests(queries: list[str], k: int) -> list[bytes]:
    out = []
    for query in queries:
        body = json.dumps({"queries": [query], "k": k}).encode()
        out.append(
            b"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
            b"\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        )
    return out


@dataclasses.dataclass
class _Conn:
    sock: socket.socket
    index: int
    """Which client this is."""
    next_request: int
    """Index of the next request to send; clients start at different queries."""
    buf: bytes = b""
    sent_at: float = 0.0
    """When the request in flight was sent (paced: when it was scheduled)."""


def _complete(buf: bytes) -> tuple[bool, bytes]:
    """Whether ``buf`` holds one whole response (we never pipeline), and its status line."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return False, b""
    head = buf[:end].lower()
    at = head.find(b"content-length:")
    length = 0
    if at >= 0:
        stop = head.find(b"\r\n", at)
        length = int(head[at + 15 : stop if stop >= 0 else len(head)])
    return len(buf) >= end + 4 + length, buf[: buf.find(b"\r\n")]


def drive(
    port: int, requests: list[bytes], *, clients: int, rate: float, settle: float, seconds: float
) -> Result:
    """Run ``settle`` + ``seconds`` of load on new connections; bounded in time whatever the server does."""
    sel = selectors.DefaultSelector()
    conns = []
    for c in range(clients):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        conn = _Conn(sock, c, c * 997)
        conns.append(conn)
        sel.register(sock, selectors.EVENT_READ, conn)
    interval = clients / rate if rate > 0 else 0.0
    start = time.perf_counter()
    measure_from, stop_at = start + settle, start + settle + seconds
    latencies: list[float] = []
    arrivals: list[float] = []
    failures: list[str] = []
    answered = 0
    due: list[tuple[float, int]] = []  # (scheduled send time, client) for idle clients

    def send(conn: _Conn, scheduled: float) -> None:
        conn.sent_at = scheduled
        conn.sock.sendall(requests[conn.next_request % len(requests)])
        conn.next_request += 1

    for c in range(clients):
        heapq.heappush(due, (start + (c / clients) * interval, c))
    while True:
        now = time.perf_counter()
        if now >= stop_at:
            break
        while due and due[0][0] <= now:
            scheduled, c = heapq.heappop(due)
            send(conns[c], scheduled)
        timeout = min(max(due[0][0] - now, 0.0), 0.05) if due else 0.05
        events = sel.select(timeout)
        woke = time.perf_counter()
        for key, _ in events:
            conn = key.data
            try:
                data = conn.sock.recv(65536)
            except OSError as exc:
                failures.append(f"{type(exc).__name__}: {exc}")
                data = b""
            if not data:
                sel.unregister(conn.sock)
                failures.append("connection closed by server")
                continue
            conn.buf += data
            done, status = _complete(conn.buf)
            if not done:
                continue
            finished = time.perf_counter()
            answered += 1
            if conn.sent_at >= measure_from:
                latencies.append(finished - conn.sent_at)
                arrivals.append(woke - conn.sent_at)
                if not status.startswith(b"HTTP/1.1 200"):
                    failures.append(status.decode(errors="replace"))
            conn.buf = b""
            # Paced: keep the schedule (a late answer makes the next send late, and
            # that lateness is counted); closed loop: send again at once.
            heapq.heappush(due, (conn.sent_at + interval if interval else finished, conn.index))
    for conn in conns:
        conn.sock.close()
    return Result(
        len(latencies),
        np.asarray(latencies) * 1000.0,
        failures,
        answered,
        np.asarray(arrivals) * 1000.0,
    )


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process and its children (Linux /proc; NaN elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return float("nan")
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return own + sum(process_cpu_s(int(child)) for child in children)


def server_stats(port: int, workers: int) -> tuple[dict, dict[str, int]]:
    """``/info`` and its stats summed over the workers (new connections reach each in turn)."""
    from agentenv.retrieval.client import RetrievalClient

    seen: dict[int, dict] = {}
    info: dict = {}
    for _ in range(50 * workers):
        info = RetrievalClient(f"http://127.0.0.1:{port}").info()
        seen[info["pid"]] = info
        if len(seen) == workers:
            break
    stats = {key: sum(i["stats"][key] for i in seen.values()) for key in info["stats"]}
    stats["largest_batch"] = max(i["stats"]["largest_batch"] for i in seen.values())
    stats["workers_seen"] = len(seen)
    return info, stats


def http_impl() -> str:
    """Which of uvicorn's HTTP implementations and event loops the server will use."""
    import importlib.util

    parser = "httptools" if importlib.util.find_spec("httptools") else "h11 (pure Python)"
    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    return f"{parser}, {loop}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_command(port: int, workers: int, python: str = "") -> list[str]:
    """The real ``serve-retrieval`` command (BM25 over the film catalog)."""
    return [
        python or sys.executable,
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


def wait_ready(port: int, proc: subprocess.Popen[bytes], timeout_s: float = 300.0) -> None:
    from agentenv.retrieval.client import RetrievalClient

    client = RetrievalClient(f"http://127.0.0.1:{port}")
    deadline = time.monotonic() + timeout_s
    while not client.health():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"server did not come up (exit code {proc.poll()})")
        time.sleep(0.1)
    client.close()


@dataclasses.dataclass
class Server:
    """One server under test and what its passes measured."""

    label: str
    port: int
    proc: subprocess.Popen[bytes]
    passes: list[Result] = dataclasses.field(default_factory=list)
    cpu_s: float = 0.0
    answered: int = 0
    gen_cpu_s: float = 0.0

    def run_pass(self, requests: list[bytes], args: Args, seconds: float, settle: float) -> Result:
        cpu, gen = process_cpu_s(self.proc.pid), time.process_time()
        result = drive(
            self.port,
            requests,
            clients=args.clients,
            rate=args.rate,
            settle=settle,
            seconds=seconds,
        )
        self.cpu_s += process_cpu_s(self.proc.pid) - cpu
        self.gen_cpu_s += time.process_time() - gen
        self.answered += result.answered
        return result


def start_server(label: str, checkout: str, port: int, workers: int, python: str = "") -> Server:
    """``serve-retrieval`` importing ``agentenv`` from ``checkout``.

    With ``python`` (an interpreter where that checkout is installed) it runs there as is;
    otherwise under this interpreter with the checkout first on PYTHONPATH (modules the
    checkout lacks then come from this one's install).
    """
    env = dict(os.environ)
    if not python:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (checkout, env.get("PYTHONPATH")) if p)
    proc = subprocess.Popen(server_command(port, workers, python), env=env, cwd=checkout)
    return Server(label, port, proc)


def percentiles(lat: np.ndarray) -> dict[str, float]:
    if not len(lat):
        return dict.fromkeys(("p50", "p90", "p99", "max"), float("nan"))
    p50, p90, p99 = np.percentile(lat, [50, 90, 99])
    return {"p50": float(p50), "p90": float(p90), "p99": float(p99), "max": float(lat.max())}


def spread(values: list[float], fmt: str) -> str:
    """``median (min-max)``."""
    return (
        f"{format(float(np.median(values)), fmt)} "
        f"({format(min(values), fmt)}-{format(max(values), fmt)})"
    )


def report(server: Server, args: Args, seconds: float) -> dict[str, float]:
    passes = server.passes
    qps = [r.requests / seconds for r in passes]
    per_pass = [percentiles(r.latencies_ms) for r in passes]
    pooled = percentiles(np.concatenate([r.latencies_ms for r in passes]))
    failures = [f for r in passes for f in r.failures]
    total_s = seconds * len(passes)
    headline_qps = sum(r.requests for r in passes) / total_s
    print(f"\n== {server.label}: {len(passes)} passes x {seconds:g} s = {total_s:g} s of load")
    print(
        f"throughput: {headline_qps:,.0f} queries/s over all passes; per pass median "
        f"{spread(qps, ',.0f')}"
    )
    print(
        "latency ms, per pass median (min-max): "
        + "  ".join(f"{q} {spread([p[q] for p in per_pass], '.2f')}" for q in ("p50", "p90", "p99"))
    )
    print(
        f"latency ms, all passes pooled: p50 {pooled['p50']:.2f}  p90 {pooled['p90']:.2f}  "
        f"p99 {pooled['p99']:.2f}  max {pooled['max']:.2f}"
    )
    arrived = percentiles(np.concatenate([r.arrived_ms for r in passes]))
    print(
        f"client side: stamped when the selector woke instead, p50 {arrived['p50']:.2f}  "
        f"p99 {arrived['p99']:.2f} ms (the rest of the p99 is this one-thread load generator "
        f"reading other answers first)"
    )
    print(f"failed requests: {len(failures)}" + (f" (first: {failures[0]})" if failures else ""))
    print(
        f"budget ratios: throughput {headline_qps / BUDGET_QPS:.2f} of {BUDGET_QPS:,.0f} q/s "
        f"(>= 1 meets it), p99 {pooled['p99'] / BUDGET_P99_MS:.2f} of {BUDGET_P99_MS:g} ms "
        f"(<= 1 meets it), failures {len(failures)} (0 meets it)"
    )
    answered = server.answered or 1
    figures = {
        "queries_per_s": headline_qps,
        "p50_ms": pooled["p50"],
        "p99_ms": pooled["p99"],
        "max_ms": pooled["max"],
        "failures": len(failures),
        "server_cpu_us_per_request": server.cpu_s / answered * 1e6,
    }
    print(
        f"CPU per request: server {server.cpu_s / answered * 1e6:.0f} µs, "
        f"load generator {server.gen_cpu_s / answered * 1e6:.0f} µs"
    )
    try:
        info, stats = server_stats(server.port, args.workers)
    except Exception as exc:  # noqa: BLE001 - the figures above stand without it
        print(f"server stats unavailable: {type(exc).__name__}: {exc}")
        return figures
    print(
        f"server: {info['backend']} over {info['corpus']} ({info['documents']} documents); "
        f"{stats['batches']} batches for {stats['requests']} requests "
        f"(mean {stats['queries'] / max(stats['batches'], 1):.1f} queries/batch, "
        f"largest {stats['largest_batch']}, {stats['rejected']} rejected; "
        f"stats of {stats['workers_seen']} worker(s), warm-up included)"
    )
    figures["mean_queries_per_batch"] = stats["queries"] / max(stats["batches"], 1)
    return figures


def parse_args(argv: list[str] | None) -> Args:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    helps = {
        "seconds": "measured seconds of one pass (passes x seconds = the headline's load)",
        "passes": "measured passes per server (alternating with --against)",
        "warmup": "unmeasured seconds of load per server before the first pass",
        "settle": "unmeasured seconds at the start of each pass (new connections)",
        "clients": "concurrent keep-alive connections, one request in flight each",
        "rate": "offered queries/s over all clients; 0 = closed loop",
        "k": "hits per query",
        "seed": "seed of the query sampler",
        "port": "server port; 0 picks a free one",
        "workers": "server processes (serve-retrieval --workers)",
        "against": "another checkout (a folder holding its agentenv package) to measure "
        "in the same run, passes interleaved",
        "against_python": "interpreter for the --against server: a venv where that checkout is "
        "installed (default: this interpreter, the checkout first on PYTHONPATH)",
        "json": "also write each server's summary figures (JSON) to this file",
        "quick": "1 s passes and 1 s warm-up: a look, not the budget figure",
    }
    for field in dataclasses.fields(Args):
        flag = f"--{field.name}"
        if field.type in (bool, "bool"):
            parser.add_argument(flag, action="store_true", help=helps[field.name])
        else:
            parser.add_argument(
                flag,
                type=type(field.default),
                default=None,
                help=f"{helps[field.name]} (default {field.default!r})",
            )
    ns = parser.parse_args(argv)
    given = {
        f.name: getattr(ns, f.name)
        for f in dataclasses.fields(Args)
        if getattr(ns, f.name) is not None
    }
    if given.get("quick"):
        given = {"seconds": 1.0, "warmup": 1.0, "settle": 0.3, **given}
    args = Args(**given)
    if args.passes < 1 or args.seconds <= 0 or args.clients < 1:
        parser.error("--passes, --seconds and --clients must be positive")
    if args.against and not (Path(args.against) / "agentenv").is_dir():
        parser.error(f"--against {args.against}: no agentenv package in that folder")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    mode = f"paced at {args.rate:,.0f} q/s" if args.rate else "closed loop"
    print(
        f"# retrieval server: {args.clients} clients, {args.workers} server process(es), "
        f"{mode}, k={args.k}"
    )
    print(
        f"# machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} "
        f"{load[2]:.2f} (1/5/15 min) at start; http parser: {http_impl()}"
    )
    print(f"# command: {' '.join([Path(sys.executable).name, *sys.argv])}", flush=True)
    requests = encode_requests(sample_queries(np.random.default_rng(args.seed), 4096), args.k)
    servers: list[Server] = []
    try:
        first_port = args.port or free_port()
        servers.append(start_server("this checkout", str(REPO), first_port, args.workers))
        if args.against:
            servers.append(
                start_server(
                    f"against {args.against}",
                    str(Path(args.against).resolve()),
                    free_port(),
                    args.workers,
                    args.against_python,
                )
            )
        started = time.perf_counter()
        for server in servers:
            wait_ready(server.port, server.proc)
        print(f"servers up in {time.perf_counter() - started:.1f} s (index build included)")
        for server in servers:  # warm-up: not counted
            server.run_pass(requests, args, args.warmup, 0.0)
            server.cpu_s = server.gen_cpu_s = 0.0
            server.answered = 0
        print(f"warm-up: {args.warmup:g} s of load per server, not counted")
        for n in range(args.passes):
            order = servers if n % 2 == 0 else servers[::-1]
            for server in order:
                result = server.run_pass(requests, args, args.seconds, args.settle)
                server.passes.append(result)
                p = percentiles(result.latencies_ms)
                print(
                    f"pass {n + 1}/{args.passes} {server.label}: "
                    f"{result.requests / args.seconds:,.0f} q/s  p50 {p['p50']:.2f}  "
                    f"p90 {p['p90']:.2f}  p99 {p['p99']:.2f}  max {p['max']:.2f} ms  "
                    f"failures {len(result.failures)}  (load average "
                    f"{os.getloadavg()[0]:.2f})",
                    flush=True,
                )
        summaries = {server.label: report(server, args, args.seconds) for server in servers}
        if args.json:
            Path(args.json).write_text(json.dumps(summaries, indent=2), encoding="utf-8")
    finally:
        for server in servers:
            server.proc.terminate()
        for server in servers:
            server.proc.wait(10)
    end_load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"\n# load average {end_load:.2f} at the end. Figures from a loaded machine (load "
        f"average near or above the core count) understate the server; compare servers "
        f"measured in one run (--against), and take budget figures on a quiet machine."
    )


if __name__ == "__main__":
    main()
