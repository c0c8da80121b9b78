"""The retrieval server against hostile or failing clients, and its client against a failing server.

Everything runs on loopback with small, bounded numbers of sockets and
short timeouts, so each test takes a few seconds at most. Throughput under
attack is measured by benchmarks/retrieval_server_hostile.py, not here.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from agentenv.retrieval.base import Hit
from agentenv.retrieval.client import RetrievalClient, RetrievalUnavailable
from agentenv.retrieval.server import ServerLimits, parse_search_body
from agentenv.retrieval.workers import supervise

from ._echo_server import ECHO_SERVER_SCRIPT

INFO = {"corpus": "echo", "checksum": "0", "backend": "echo"}


class Echo:
    """Answers each query with itself, ``k`` times: results are checkable without an index."""

    def search(self, query: str, k: int) -> list[Hit]:
        return [Hit(query, float(i), i) for i in range(k)]

    def search_batch(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        return [self.search(q, k) for q in queries]


@pytest.fixture(scope="module", autouse=True)
def server_extra() -> None:
    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")


@contextlib.contextmanager
def serving(**limits: Any) -> Iterator[Any]:
    from agentenv.retrieval.server import BackgroundServer

    server = BackgroundServer(Echo(), INFO, limits=ServerLimits(**limits)).start()
    try:
        yield server
    finally:
        server.stop()


def port_of(server: Any) -> int:
    return int(server.url.rsplit(":", 1)[1])


def guard_stats(server: Any) -> Any:
    return server.app.state.connections.stats


def open_idle(port: int, n: int) -> list[socket.socket]:
    """``n`` connections that send nothing."""
    return [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(n)]


def read_answer(sock: socket.socket, timeout_s: float = 5.0) -> tuple[int, dict[str, Any]]:
    """Read one response until the server closes or Content-Length is met; (0, {}) if closed silently."""
    sock.settimeout(timeout_s)
    data = b""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        data += chunk
        head, sep, body = data.partition(b"\r\n\r\n")
        length = [
            int(line.split(b":")[1])
            for line in head.lower().split(b"\r\n")
            if line.startswith(b"content-length:")
        ]
        if sep and length and len(body) >= length[0]:
            break
    if not data:
        return 0, {}
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def raw(port: int, data: bytes) -> tuple[int, dict[str, Any]]:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(data)
        return read_answer(sock)


def post(port: int, body: bytes) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("POST", "/search", body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        assert response.getheader("content-type") == "application/json"
        return response.status, json.loads(response.read())
    finally:
        conn.close()


class Slowloris:
    """Threads that send request headers one byte at a time and never finish them."""

    def __init__(self, port: int, n: int, every_s: float = 0.05) -> None:
        self.port, self.every_s = port, every_s
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(n)]

    def _run(self) -> None:
        while not self.stop.is_set():  # reconnect when the server drops us
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
                    sock.sendall(b"POST /search HTTP/1.1\r\nHost: x\r\n")
                    while not self.stop.is_set():
                        sock.sendall(b"X")
                        time.sleep(self.every_s)
            except OSError:
                time.sleep(self.every_s)

    def __enter__(self) -> Slowloris:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(5)


def legit_searches(url: str, clients: int, per_client: int) -> list[list[Hit]]:
    def work(c: int) -> list[list[Hit]]:
        client = RetrievalClient(url)
        try:
            return [client.search(f"c{c}q{i}", 2) for i in range(per_client)]
        finally:
            client.close()

    with ThreadPoolExecutor(clients) as pool:
        return [hits for batch in pool.map(work, range(clients)) for hits in batch]


# ------------------------------------------------------------- idle and slow connections


def test_idle_and_slowloris_connections_do_not_lock_clients_out() -> None:
    with serving(max_connections=64, header_timeout_s=2.0) as server:
        port = port_of(server)
        idle = open_idle(port, 200)  # over three times the cap, all from 127.0.0.1
        more_idle: list[socket.socket] = []
        attacker = threading.Thread(target=lambda: more_idle.extend(open_idle(port, 100)))
        try:
            with Slowloris(port, 8):
                attacker.start()  # keeps opening idle sockets while the clients search
                results = legit_searches(server.url, clients=8, per_client=25)
                attacker.join(10)
        finally:
            for sock in idle + more_idle:
                sock.close()
        stats = guard_stats(server)
        assert results == [
            [Hit(f"c{c}q{i}", 0.0, 0), Hit(f"c{c}q{i}", 1.0, 1)]
            for c in range(8)
            for i in range(25)
        ]
        assert stats.evicted >= 200 and stats.refused == 0
        assert server.stats.rejected == 0 and server.stats.invalid == 0


def test_the_per_client_cap_evicts_that_clients_idle_connections() -> None:
    with serving(max_connections_per_client=16) as server:
        idle = open_idle(port_of(server), 50)
        try:
            assert RetrievalClient(server.url).search("heat", 1) == [Hit("heat", 0.0, 0)]
            stats = guard_stats(server)
            assert stats.open <= 16 and stats.evicted >= 34
            # The first idle sockets, the longest waiting, are the ones closed.
            assert all(read_answer(sock, 1.0) == (0, {}) for sock in idle[:30])
        finally:
            for sock in idle:
                sock.close()


def test_silent_slow_and_idle_connections_time_out() -> None:
    with serving(header_timeout_s=0.4, idle_timeout_s=0.6) as server:
        port = port_of(server)
        silent = socket.create_connection(("127.0.0.1", port), timeout=5)
        trickle = socket.create_connection(("127.0.0.1", port), timeout=5)
        trickle.sendall(b"POST /search HTTP/1.1\r\nHo")
        kept = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        kept.request("GET", "/health")
        assert kept.getresponse().read() == b'{"status":"ok"}'
        start = time.monotonic()
        status, payload = read_answer(trickle)
        assert status == 408 and "headers not received within 0.4 s" in payload["error"]
        assert read_answer(silent) == (0, {})  # nothing sent: closed without an answer
        assert time.monotonic() - start < 2.0
        assert kept.sock is not None and read_answer(kept.sock) == (0, {})  # keep-alive expired
        assert time.monotonic() - start < 3.0
        stats = guard_stats(server)
        assert stats.header_timeouts == 2 and stats.idle_timeouts == 1
        for sock in (silent, trickle):
            sock.close()
        kept.close()


def test_a_slow_body_times_out_with_408() -> None:
    with serving(body_timeout_s=0.4) as server:
        with socket.create_connection(("127.0.0.1", port_of(server)), timeout=5) as sock:
            sock.sendall(b'POST /search HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n{"q')
            status, payload = read_answer(sock)
        assert status in (400, 408), payload  # 408 from the guard (or 400: body cut short)
        assert "body" in payload["error"]
        assert guard_stats(server).body_timeouts == 1


def test_oversized_headers_get_431() -> None:
    with serving(max_header_bytes=4096) as server:
        port = port_of(server)
        status, payload = raw(
            port, b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 10_000 + b"\r\n\r\n"
        )
        assert status == 431 and "4096 bytes" in payload["error"]
        assert RetrievalClient(server.url).health()


# ------------------------------------------------------------- malformed requests


@pytest.fixture(scope="module")
def echo_server() -> Iterator[Any]:
    with serving() as server:
        yield server


@pytest.mark.parametrize(
    ("body", "status", "names"),
    [
        (
            b'{"queries": ["heat"], "k": ' + b"7" * 5001 + b"}",
            422,
            "'k' must be an integer between 1 and 100, got an integer with 5001 digits",
        ),
        (b'{"queries": ["heat"], "k": -' + b"7" * 5001 + b"}", 422, "'k' must be an integer"),
        (b'{"queries": [' + b"9" * 5001 + b'], "k": 1}', 422, "'queries'[0] must be a string"),
        (
            b'{"k": 1, "queries": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
            400,
            "'queries' nests too deeply",
        ),
        (
            b'{"queries": ["a"], "k": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
            400,
            "'k' nests too deeply",
        ),
        (b"[" * 100_000, 400, "the body nests too deeply"),
        (
            b'{"queries": ["heat"], "k": 1.5}',
            422,
            "'k' must be an integer between 1 and 100, got float",
        ),
        (b'{"queries": ["heat"], "k": NaN}', 422, "'k' must be an integer"),
        (b'{"queries": ["heat"], "k": 1e999}', 422, "'k' must be an integer"),
        (b'{"queries": ["heat"], "k": null}', 422, "'k' must be an integer"),
        (b'{"queries": ["heat"], "k": -3}', 422, "'k' is -3"),
        (b'{"queries": {"a": 1}, "k": 3}', 422, "'queries' must be a list of strings, got dict"),
        (b'{"queries": [["nested"]], "k": 3}', 422, "'queries'[0] must be a string, got list"),
        (b'{"queries": ["\\ud800"], "k": 3}', 422, "'queries'[0] is not valid Unicode"),
        (b'{"queries": ["heat"], "k": 3', 400, "not valid UTF-8 JSON"),
        (b"", 400, "not valid UTF-8 JSON"),
        (b"\x00\x01\x02", 400, "not valid UTF-8 JSON"),
        (b'"just a string"', 422, "must be a JSON object"),
        (b"12345678901234567890123456789012345678901", 422, "must be a JSON object"),
    ],
    ids=[
        "k-5001-digits",
        "k-negative-digits",
        "query-5001-digits",
        "queries-deep",
        "k-deep",
        "body-deep",
        "k-float",
        "k-nan",
        "k-inf",
        "k-null",
        "k-negative",
        "queries-dict",
        "query-list",
        "query-surrogate",
        "truncated",
        "empty",
        "binary",
        "string",
        "long-number",
    ],
)
def test_malformed_bodies_get_4xx_json_naming_the_field(
    echo_server: Any, body: bytes, status: int, names: str
) -> None:
    got, payload = post(port_of(echo_server), body)
    assert (got, names) == (status, names) and names in payload["error"]


def test_parser_never_raises_anything_but_request_errors() -> None:
    from agentenv.retrieval.server import RequestError

    limits = ServerLimits()
    bodies = [b'{"queries": [], "k": ' + b"1" * n + b"}" for n in (4300, 4301, 100_000)]
    bodies += [b'{"queries": [' + b"{" * n for n in (999, 1000, 5000)]
    bodies += [b"\xff" * 10, b"\xef\xbb\xbf{}", b'{"queries": ["a"], "k": 1, "k": 2}']
    for body in bodies:
        with contextlib.suppress(RequestError):
            parse_search_body(body, limits)


@pytest.mark.parametrize(
    ("request_bytes", "status", "says"),
    [
        (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 40, 400, "malformed HTTP"),
        (b"NOT HTTP AT ALL\r\n\r\n", 400, "malformed HTTP"),
        (
            b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Length: " + b"9" * 5001 + b"\r\n\r\n",
            400,
            "",
        ),
        (b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400, ""),
        (b"GET /nope HTTP/1.1\r\nHost: [\r\n\r\n", 404, "endpoints are POST /search"),
        (b"GET /%ff%fe%ed%a0%80 HTTP/1.1\r\nHost: x\r\n\r\n", 404, "endpoints are POST /search"),
        (b"DELETE /search HTTP/1.1\r\nHost: x\r\n\r\n", 405, "endpoints are POST /search"),
        (
            b"POST /search HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            b'5\r\n{"que\r\n0\r\n\r\n',
            400,
            "not valid UTF-8 JSON",
        ),
    ],
    ids=[
        "tls-hello",
        "garbage",
        "content-length-5001-digits",
        "content-length-text",
        "bad-host",
        "bad-path",
        "bad-method",
        "chunked-bad-json",
    ],
)
def test_malformed_http_gets_4xx_json(
    echo_server: Any, request_bytes: bytes, status: int, says: str
) -> None:
    got, payload = raw(port_of(echo_server), request_bytes)
    assert got == status and says in payload["error"], payload


def test_the_server_still_answers_after_the_malformed_requests(echo_server: Any) -> None:
    assert RetrievalClient(echo_server.url).search("ok", 1) == [Hit("ok", 0.0, 0)]


# ------------------------------------------------------------- dead workers


def worker_pids(url: str, want: int, timeout_s: float = 10.0, avoid: int = -1) -> set[int]:
    """Pids answering ``/info`` over fresh connections, until ``want`` (other than ``avoid``) seen."""
    seen: set[int] = set()
    deadline = time.monotonic() + timeout_s
    while len(seen - {avoid}) < want and time.monotonic() < deadline:
        client = RetrievalClient(url)
        seen.add(client.info()["pid"])
        client.close()
    return seen


@pytest.mark.skipif(not hasattr(socket, "SO_REUSEPORT"), reason="needs SO_REUSEPORT")
def test_a_killed_worker_is_restarted_while_the_other_keeps_serving() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-c", ECHO_SERVER_SCRIPT, str(port)], stderr=subprocess.PIPE
    )
    try:
        RetrievalClient(url).wait_ready(timeout_s=20)
        before = worker_pids(url, 2)
        assert len(before) == 2
        stop = threading.Event()
        answered: list[bool] = []

        def load() -> None:  # new connections all along, so both workers get some
            while not stop.is_set():
                client = RetrievalClient(url)
                answered.append(client.search("q", 1) == [Hit("q", 0.0, 0)])
                client.close()

        with ThreadPoolExecutor(4) as pool:
            loads = [pool.submit(load) for _ in range(4)]
            time.sleep(0.2)
            victim = min(before)
            os.kill(victim, signal.SIGKILL)
            after = worker_pids(url, 2, avoid=victim)
            time.sleep(0.2)
            stop.set()
            for future in loads:
                future.result(timeout=10)  # no client call failed (they retry a reset)
        assert victim not in after and len(after) == 2 and (after - before)
        assert answered and all(answered)
        assert proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
        err = proc.communicate(timeout=5)[1].decode()
        assert f"worker {victim} exited with -9; restarting it" in err
        for pid in before | after:
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=5)


def test_workers_that_keep_dying_stop_the_supervisor_with_an_error() -> None:
    if not hasattr(os, "fork"):
        pytest.skip("needs fork")
    spawned: list[int] = []

    def spawn(slot: int) -> int:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child dies at once
            os._exit(3)
        spawned.append(pid)
        return pid

    # Run in a child process: supervise() installs signal handlers and reaps any child.
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 0
        try:
            supervise(spawn, 2, max_restarts=3, restart_window_s=60)
        except RuntimeError as exc:
            code = 7 if "keep dying" in str(exc) and "exited with 3" in str(exc) else 8
        except BaseException:
            code = 9
        os._exit(code)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 7
            return
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail("supervise() kept restarting workers that die at once")


# ------------------------------------------------------------- the client when the server fails


def unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_no_server_retries_then_says_how_to_start_one() -> None:
    url = f"http://127.0.0.1:{unused_port()}"
    client = RetrievalClient(url, retries=3, backoff_s=0.02)
    start = time.monotonic()
    with pytest.raises(RetrievalUnavailable) as info:
        client.search("heat", 3)
    message = str(info.value)
    assert time.monotonic() - start < 1.0
    assert "after 4 attempts" in message and url in message
    assert "agentenv serve-retrieval" in message and "--port" in message


def test_a_hung_server_is_reported_as_not_responding_before_the_tool_time_limit() -> None:
    from agentenv.engine.tools import DEFAULT_TIMEOUT_S

    client = RetrievalClient("http://127.0.0.1:1")
    assert client.deadline_s < DEFAULT_TIMEOUT_S  # the client's error reaches the agent first
    with socket.socket() as hung:  # accepts (in the kernel) and never answers
        hung.bind(("127.0.0.1", 0))
        hung.listen(8)
        client = RetrievalClient(f"http://127.0.0.1:{hung.getsockname()[1]}?deadline_s=0.3")
        start = time.monotonic()
        with pytest.raises(RetrievalUnavailable, match="not responding.*not at fault"):
            client.search("heat", 3)
        assert time.monotonic() - start < 1.0


def test_env_reset_without_a_server_fails_with_the_url_and_the_fix() -> None:
    gym = pytest.importorskip("gymnasium")
    pytest.importorskip("bokeh_sampledata")
    import agentenv  # noqa: F401 - registers the envs

    url = f"http://127.0.0.1:{unused_port()}"
    env = gym.make("MediaSearch-SingleTurn-v0", retriever=url)
    try:
        start = time.monotonic()
        with pytest.raises(RetrievalUnavailable, match="agentenv serve-retrieval") as info:
            env.reset(seed=0)
        assert url in str(info.value) and time.monotonic() - start < 5.0
    finally:
        env.close()
