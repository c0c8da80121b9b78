"""Throughput and latency of the shared retrieval server under many clients.

Starts ``agentenv serve-retrieval --corpus media --backend bm25`` in a child
process, then drives it from this process with N concurrent keep-alive
connections, each sending one query per request, as env workers do.

The load generator shares the 2 cores with the server, so it is one thread
over non-blocking sockets and a selector, sending pre-encoded requests and
reading only the status line and Content-Length: a few µs per request,
where an asyncio-streams or httpx client spends most of a core.

Two modes:

- closed loop (default): every client sends its next query as soon as the
  last one is answered; measures the most the server can do. With C clients
  mean latency is C / throughput by Little's law, so latency here is mostly
  queueing.
- paced (``--rate R``): clients send R queries/s in total on a fixed
  schedule; latency is measured from the scheduled send time, so a slow
  answer also counts against the requests it delays.

Budget (DESIGN.md): >= 3,000 queries/s on 2 cores, p99 <= 20 ms, 0 failures.

uvicorn uses httptools and uvloop when they are installed; they halve the
server's CPU per request (measured ~310 → ~170 µs with BM25), so install them
(``pip install httptools uvloop``) before comparing against the budget.

Usage:
    python benchmarks/retrieval_server.py --seconds 30 --clients 64
    python benchmarks/retrieval_server.py --seconds 30 --clients 64 --rate 3000
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


@dataclasses.dataclass(frozen=True)
class Args:
    seconds: float = 30.0
    """Measured duration; the run stops by itself after warm-up plus this."""
    warmup: float = 2.0
    """Seconds of load before measuring (connection set-up, caches)."""
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


@dataclasses.dataclass
class Result:
    requests: int
    latencies_ms: np.ndarray
    failures: list[str]


def film_texts() -> list[str]:
    """The film catalog's documents, to draw query words from."""
    from agentenv.corpora.media import load_catalog

    return load_catalog().documents()[1]


def sample_queries(rng: np.random.Generator, n: int) -> list[str]:
    """Queries like an agent's: one to four words drawn from real film documents."""
    words = np.array([w for text in film_texts()[:3000] for w in text.split()
                      if w.isalpha() and len(w) > 2])
    sizes = rng.integers(1, 5, size=n)
    return [" ".join(words[rng.integers(0, len(words), size=int(s))]) for s in sizes]


def encode_requests(queries: list[str], k: int) -> list[bytes]:
    out = []
    for query in queries:
        body = json.dumps({"queries": [query], "k": k}).encode()
        out.append(b"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
                   b"\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
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


def drive(args: Args, port: int, requests: list[bytes]) -> Result:
    """Run the load for warm-up + ``seconds``; bounded in time whatever the server does."""
    sel = selectors.DefaultSelector()
    conns = []
    for c in range(args.clients):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        conn = _Conn(sock, c, c * 997)
        conns.append(conn)
        sel.register(sock, selectors.EVENT_READ, conn)
    interval = args.clients / args.rate if args.rate > 0 else 0.0
    start = time.perf_counter()
    measure_from, stop_at = start + args.warmup, start + args.warmup + args.seconds
    latencies: list[float] = []
    failures: list[str] = []
    due: list[tuple[float, int]] = []  # (scheduled send time, client) for idle clients

    def send(conn: _Conn, scheduled: float) -> None:
        conn.sent_at = scheduled
        conn.sock.sendall(requests[conn.next_request % len(requests)])
        conn.next_request += 1

    for c in range(args.clients):
        heapq.heappush(due, (start + (c / args.clients) * interval, c))
    while True:
        now = time.perf_counter()
        if now >= stop_at:
            break
        while due and due[0][0] <= now:
            scheduled, c = heapq.heappop(due)
            send(conns[c], scheduled)
        timeout = min(max(due[0][0] - now, 0.0), 0.05) if due else 0.05
        for key, _ in sel.select(timeout):
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
            if conn.sent_at >= measure_from:
                latencies.append(finished - conn.sent_at)
                if not status.startswith(b"HTTP/1.1 200"):
                    failures.append(status.decode(errors="replace"))
            conn.buf = b""
            # Paced: keep the schedule (a late answer makes the next send late, and
            # that lateness is counted); closed loop: send again at once.
            heapq.heappush(due, (conn.sent_at + interval if interval else finished, conn.index))
    for conn in conns:
        conn.sock.close()
    return Result(len(latencies), np.sort(np.asarray(latencies)) * 1000.0, failures)


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


def server_command(port: int, workers: int) -> list[str]:
    """The real ``serve-retrieval`` command (BM25 over the film catalog)."""
    return [sys.executable, "-m", "agentenv.retrieval.serve_cli", "--corpus", "media",
            "--backend", "bm25", "--host", "127.0.0.1", "--port", str(port),
            "--workers", str(workers)]


def wait_ready(port: int, proc: subprocess.Popen[bytes], timeout_s: float = 300.0) -> None:
    from agentenv.retrieval.client import RetrievalClient

    client = RetrievalClient(f"http://127.0.0.1:{port}")
    deadline = time.monotonic() + timeout_s
    while not client.health():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"server did not come up (exit code {proc.poll()})")
        time.sleep(0.1)
    client.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for field in dataclasses.fields(Args):
        parser.add_argument(f"--{field.name}", type=type(field.default), default=field.default)
    ns = parser.parse_args(argv)
    args = Args(**{f.name: getattr(ns, f.name) for f in dataclasses.fields(Args)})
    port = args.port or free_port()
    requests = encode_requests(sample_queries(np.random.default_rng(args.seed), 4096), args.k)
    started = time.perf_counter()
    proc = subprocess.Popen(server_command(port, args.workers))
    try:
        wait_ready(port, proc)
        print(f"server up in {time.perf_counter() - started:.1f} s (index build included)")
        cpu = (process_cpu_s(proc.pid), time.process_time())
        result = drive(args, port, requests)
        cpu = (process_cpu_s(proc.pid) - cpu[0], time.process_time() - cpu[1])
        info, stats = server_stats(port, args.workers)
    finally:
        proc.terminate()
        proc.wait(10)
    lat = result.latencies_ms
    mode = f"paced at {args.rate:,.0f} q/s offered" if args.rate else "closed loop"
    print(f"{info['backend']} over {info['corpus']} ({info['documents']} documents); "
          f"{args.workers} server process(es), {args.clients} clients, {mode}, k={args.k}, "
          f"{args.seconds:g} s measured")
    print(f"throughput: {result.requests / args.seconds:,.0f} queries/s "
          f"({result.requests} requests of one query)")
    if len(lat):
        print(f"latency ms: p50 {np.percentile(lat, 50):.2f}  p90 {np.percentile(lat, 90):.2f}  "
              f"p99 {np.percentile(lat, 99):.2f}  "
              f"max {lat[-1]:.2f}")
    print(f"http parser: {http_impl()}")
    print(f"failed requests: {len(result.failures)}"
          + (f" (first: {result.failures[0]})" if result.failures else ""))
    total = stats["requests"] or 1
    print(f"CPU per request: server {cpu[0] / total * 1e6:.0f} µs, "
          f"load generator {cpu[1] / total * 1e6:.0f} µs (warm-up included)")
    print(f"server: {stats['batches']} batches for {stats['requests']} requests "
          f"(mean {stats['queries'] / max(stats['batches'], 1):.1f} queries/batch, "
          f"largest {stats['largest_batch']}, {stats['rejected']} rejected; "
          f"stats of {stats['workers_seen']} worker(s))")


if __name__ == "__main__":
    main()
