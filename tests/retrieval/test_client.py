"""RetrievalClient against a scripted stdlib HTTP server: no extra needed.

The fake server lets each test decide exactly what the client sees (503s,
4xx, dropped keep-alive connections, silence), which a real server cannot
be made to do on cue. The real server is exercised in test_server.py.
"""

from __future__ import annotations

import json
import multiprocessing
import operator
import pickle
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agentenv.retrieval.base import Hit, Retriever
from agentenv.retrieval.client import (
    RetrievalClient,
    RetrievalError,
    RetrievalRequestError,
    RetrievalUnavailable,
)

Reply = tuple[int, dict[str, str], bytes]


def echo_hits(query: str, k: int) -> list[Hit]:
    """Deterministic fake results: the query itself, then numbered neighbours."""
    return [Hit(f"{query}#{i}", len(query) / (i + 1), i) for i in range(k)]


def echo_reply(body: bytes) -> Reply:
    request = json.loads(body)
    results = [[h._asdict() for h in echo_hits(q, request["k"])] for q in request["queries"]]
    return 200, {}, json.dumps({"results": results}).encode()


class FakeServer:
    """ThreadingHTTPServer whose replies come from ``script`` (one per request), then echo."""

    def __init__(self) -> None:
        self.script: list[Reply | Callable[[bytes], Reply]] = []
        self.requests: list[tuple[str, str, bytes]] = []
        self.close_after_reply = False
        self.delay_s = 0.0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as two writes

            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def _reply(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length)
                fake.requests.append((self.command, self.path, body))
                time.sleep(fake.delay_s)
                step = fake.script.pop(0) if fake.script else None
                if callable(step) or step is None:
                    status, headers, data = (step or fake.default)(body)
                else:
                    status, headers, data = step
                try:
                    self.send_response(status)
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return  # a client that timed out has gone: expected in one test
                if fake.close_after_reply:  # drop keep-alive without saying so
                    self.close_connection = True

            do_GET = do_POST = _reply

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    def default(self, body: bytes) -> Reply:
        if not body:  # GET /info or /health
            return 200, {}, b'{"status": "ok", "corpus": "fake"}'
        return echo_reply(body)


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    server = FakeServer()
    server.thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def unused_port() -> int:
    """A loopback port that nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_client_is_a_retriever_and_returns_hits(fake: FakeServer) -> None:
    client = RetrievalClient(fake.url)
    assert isinstance(client, Retriever)
    assert client.search("heat", 3) == echo_hits("heat", 3)
    assert client.search_batch(["a", "bb"], 2) == [echo_hits("a", 2), echo_hits("bb", 2)]
    assert client.search_batch([], 2) == []
    assert client.info()["corpus"] == "fake"


def test_connection_is_reused(fake: FakeServer) -> None:
    client = RetrievalClient(fake.url)
    for _ in range(5):
        client.search("x", 1)
    ports = {client._local.conn.sock.getsockname()[1]}
    client.search("y", 1)
    ports.add(client._local.conn.sock.getsockname()[1])
    assert len(ports) == 1


def test_large_batches_are_split_to_the_request_limit(fake: FakeServer) -> None:
    client = RetrievalClient(fake.url, max_queries_per_request=2)
    queries = [f"q{i}" for i in range(5)]
    assert client.search_batch(queries, 1) == [echo_hits(q, 1) for q in queries]
    sizes = [len(json.loads(body)["queries"]) for _, _, body in fake.requests]
    assert sizes == [2, 2, 1]


def test_retries_503_then_succeeds_honouring_capped_retry_after(fake: FakeServer) -> None:
    busy = (503, {"Retry-After": "30"}, b'{"error": "server overloaded"}')
    fake.script = [busy, busy]
    client = RetrievalClient(fake.url, retries=3, backoff_s=0.01, max_retry_after_s=0.05)
    start = time.monotonic()
    assert client.search("heat", 2) == echo_hits("heat", 2)
    assert len(fake.requests) == 3
    assert 0.1 <= time.monotonic() - start < 2.0  # two capped waits, not 30 s


def test_503_after_all_retries_raises_unavailable_with_the_reason(fake: FakeServer) -> None:
    fake.script = [(503, {"Retry-After": "1"}, b'{"error": "server overloaded"}')] * 3
    client = RetrievalClient(fake.url, retries=2, backoff_s=0.0, max_retry_after_s=0.01)
    with pytest.raises(RetrievalUnavailable, match="after 3 attempts.*server overloaded"):
        client.search("heat", 2)
    assert len(fake.requests) == 3


def test_4xx_is_not_retried_and_carries_the_reason(fake: FakeServer) -> None:
    fake.script = [(422, {}, b'{"error": "\'k\' is 500; expected 1 <= k <= 100"}')]
    client = RetrievalClient(fake.url, retries=3)
    with pytest.raises(RetrievalRequestError, match="expected 1 <= k <= 100") as info:
        client.search("heat", 500)
    assert info.value.status == 422
    assert isinstance(info.value, ValueError)
    assert len(fake.requests) == 1


def test_500_is_not_retried(fake: FakeServer) -> None:
    fake.script = [(500, {}, b'{"error": "back-end error: KeyError"}')]
    client = RetrievalClient(fake.url, retries=3)
    with pytest.raises(RetrievalError, match="KeyError") as info:
        client.search("heat", 1)
    assert not isinstance(info.value, RetrievalUnavailable)
    assert len(fake.requests) == 1


def test_nothing_listening_raises_unavailable_quickly() -> None:
    client = RetrievalClient(
        f"http://127.0.0.1:{unused_port()}", retries=2, backoff_s=0.01, timeout_s=1.0
    )
    start = time.monotonic()
    with pytest.raises(RetrievalUnavailable, match="unavailable after 3 attempts"):
        client.search("heat", 3)
    assert time.monotonic() - start < 2.0
    assert client.health() is False


def test_a_hung_server_raises_unavailable_after_the_timeout(fake: FakeServer) -> None:
    fake.delay_s = 1.0
    client = RetrievalClient(fake.url, timeout_s=0.2, retries=3)
    start = time.monotonic()
    with pytest.raises(RetrievalUnavailable, match="is not responding.*not at fault"):
        client.search("heat", 3)
    assert time.monotonic() - start < 0.9  # no retry after a timeout


def test_a_dropped_keep_alive_connection_is_reopened_without_spending_a_retry(
    fake: FakeServer,
) -> None:
    fake.close_after_reply = True
    client = RetrievalClient(fake.url, retries=0)
    for query in ("a", "b", "c"):
        assert client.search(query, 1) == echo_hits(query, 1)


def test_bad_arguments_fail_before_any_request(fake: FakeServer) -> None:
    client = RetrievalClient(fake.url)
    with pytest.raises(TypeError, match="sequence of str"):
        client.search_batch("heat", 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="positive int"):
        client.search("heat", 0)
    with pytest.raises(ValueError, match="http://HOST:PORT"):
        RetrievalClient("127.0.0.1:8700")
    assert fake.requests == []


def test_client_pickles_without_its_connection(fake: FakeServer) -> None:
    client = RetrievalClient(fake.url, timeout_s=2.0, retries=1)
    client.search("warm", 1)  # opens a connection, which must not travel
    clone = pickle.loads(pickle.dumps(client))
    assert repr(clone) == repr(client)
    assert getattr(clone._local, "conn", None) is None
    assert clone.search("heat", 2) == echo_hits("heat", 2)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_client_works_in_worker_processes(fake: FakeServer, method: str) -> None:
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} start method here")
    client = RetrievalClient(fake.url)
    client.search("parent", 1)  # the parent's connection exists before the fork
    with multiprocessing.get_context(method).Pool(2) as pool:
        # methodcaller pickles by reference to the stdlib, so spawned children can
        # load it (this test module is not importable by name in a child).
        search = operator.methodcaller("search", "child", 2)
        results = pool.map_async(search, [client] * 4).get(timeout=30)
    assert results == [echo_hits("child", 2)] * 4
    assert client.search("parent", 1) == echo_hits("parent", 1)


def test_a_forked_child_does_not_share_the_parents_connection(fake: FakeServer) -> None:
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork start method here")
    client = RetrievalClient(fake.url)
    client.search("parent", 1)
    parent_conn = client._local.conn
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()

    def child() -> None:  # inherits ``client`` as is, connection included
        queue.put((client.search("child", 2), client._local.conn is parent_conn))

    process = ctx.Process(target=child)
    process.start()
    hits, reused = queue.get(timeout=10)
    process.join(10)
    assert hits == echo_hits("child", 2) and not reused
    assert client.search("parent", 1) == echo_hits("parent", 1)
    assert client._local.conn is parent_conn


def test_threads_get_their_own_connection(fake: FakeServer) -> None:
    client = RetrievalClient(fake.url)
    results: list[list[Hit]] = []
    threads = [
        threading.Thread(target=lambda q=q: results.append(client.search(q, 1)))
        for q in ("a", "b", "c", "d")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert sorted(results) == sorted(echo_hits(q, 1) for q in "abcd")


def test_the_deadline_bounds_a_call_with_all_its_retries() -> None:
    client = RetrievalClient(
        f"http://127.0.0.1:{unused_port()}", retries=100, backoff_s=0.05, deadline_s=0.3
    )
    start = time.monotonic()
    with pytest.raises(RetrievalUnavailable, match="unavailable after [0-9]+ attempts") as info:
        client.search("heat", 3)
    assert time.monotonic() - start < 0.6
    assert client.url in str(info.value) and "agentenv serve-retrieval" in str(info.value)


def test_a_slow_answer_is_cut_at_the_deadline(fake: FakeServer) -> None:
    fake.delay_s = 1.0
    client = RetrievalClient(fake.url, timeout_s=5.0, deadline_s=0.3)
    start = time.monotonic()
    with pytest.raises(RetrievalUnavailable, match="not responding"):
        client.search("heat", 3)
    assert time.monotonic() - start < 0.8


def test_503s_until_the_deadline_say_overloaded(fake: FakeServer) -> None:
    fake.script = [(503, {"Retry-After": "1"}, b'{"error": "server overloaded"}')] * 50
    client = RetrievalClient(
        fake.url, retries=50, backoff_s=0.05, max_retry_after_s=0.05, deadline_s=0.3
    )
    with pytest.raises(RetrievalUnavailable, match="overloaded"):
        client.search("heat", 2)
    assert 2 <= len(fake.requests) < 50


def test_options_in_the_url_query_string() -> None:
    client = RetrievalClient("http://127.0.0.1:8700/r?deadline_s=9&retries=1&timeout_s=2")
    assert (client.url, client.deadline_s, client.retries, client.timeout_s) == (
        "http://127.0.0.1:8700/r",
        9.0,
        1,
        2.0,
    )
    assert RetrievalClient("http://127.0.0.1:8700?retries=1", retries=4).retries == 4
    with pytest.raises(ValueError, match="unknown option 'bogus'"):
        RetrievalClient("http://127.0.0.1:8700?bogus=1")
    with pytest.raises(ValueError, match="not a number"):
        RetrievalClient("http://127.0.0.1:8700?deadline_s=soon")
