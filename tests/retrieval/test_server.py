"""The real retrieval server (uvicorn on a free loopback port) with its client.

Server tests skip without the ``server`` extra (the ``minimal`` tox env);
the import guard and the batcher itself are tested there too.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agentenv.retrieval.base import Hit
from agentenv.retrieval.batching import MicroBatcher, Overloaded
from agentenv.retrieval.client import RetrievalClient, RetrievalError, RetrievalUnavailable
from agentenv.retrieval.server import ServerLimits

from ._echo_server import ECHO_SERVER_SCRIPT

INFO = {"corpus": "test-films", "checksum": "abc123", "backend": "test"}


class ExactMatchRetriever:
    """Scores a document by how many query words it contains; ties by doc id.

    Small and obviously right, so server tests do not depend on a back-end.
    ``delay_s`` makes each batch slow, ``gate`` makes it wait for the test,
    and ``calls`` records the batch sizes the server asked for.
    """

    def __init__(
        self, texts: Sequence[str], *, delay_s: float = 0.0, gate: threading.Event | None = None
    ) -> None:
        self.docs = [(f"d{i:04d}", set(text.lower().split())) for i, text in enumerate(texts)]
        self.delay_s = delay_s
        self.gate = gate
        self.calls: list[int] = []

    def search(self, query: str, k: int) -> list[Hit]:
        words = set(query.lower().split())
        scored = sorted((-float(len(words & doc)), doc_id) for doc_id, doc in self.docs)
        return [Hit(doc_id, -neg, rank) for rank, (neg, doc_id) in enumerate(scored[:k])]

    def search_batch(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        self.calls.append(len(queries))
        if self.gate is not None:
            self.gate.wait(10)
        time.sleep(self.delay_s)
        return [self.search(q, k) for q in queries]


def film_texts(n: int) -> list[str]:
    """The first ``n`` films of the pinned movies.db, as plain text (real data)."""
    import bokeh_sampledata

    path = Path(bokeh_sampledata.__file__).parent / "_data" / "movies.db"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute(
            'SELECT Title, Year, Genre, Director, "Cast" FROM omdb ORDER BY ID LIMIT ?', (n,)
        ).fetchall()
    return [" ".join(str(v) for v in row if v) for row in rows]


def film_queries(texts: Sequence[str], n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    words = [w for text in texts for w in text.split() if w.isalpha()]
    return [
        " ".join(words[i] for i in rng.integers(0, len(words), size=int(size)))
        for size in rng.integers(1, 5, size=n)
    ]


@pytest.fixture(scope="module")
def server_extra() -> None:
    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")


def start(retriever: Any, limits: ServerLimits | None = None, **kwargs: Any) -> Any:
    from agentenv.retrieval.server import BackgroundServer

    return BackgroundServer(retriever, INFO, limits=limits, **kwargs).start()


@pytest.fixture(scope="module")
def films() -> list[str]:
    return film_texts(2000)


@pytest.fixture(scope="module")
def exact_server(server_extra: None, films: list[str]) -> Iterator[Any]:
    server = start(ExactMatchRetriever(films[:300]))
    yield server
    server.stop()


def post(url: str, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, dict]:
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        conn.request("POST", "/search", body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, {"headers": dict(response.headers), **json.loads(response.read())}
    finally:
        conn.close()


# ---------------------------------------------------------------- results


def test_client_results_equal_the_in_process_bm25(server_extra: None, films: list[str]) -> None:
    from agentenv.retrieval.bm25 import BM25Retriever

    ids = [f"film{i}" for i in range(len(films))]
    local = BM25Retriever.from_texts(films, ids=ids)
    queries = film_queries(films, 200)
    expected = local.search_batch(queries, 10)
    with start(local) as server:
        client = RetrievalClient(server.url)
        one_by_one = [client.search(q, 10) for q in queries[:50]]
        batched = client.search_batch(queries[50:], 10)
    assert one_by_one + batched == expected  # same ids, ranks, and bit-equal scores
    assert sum(len(hits) for hits in expected) > 1000


def test_health_and_info(exact_server: Any) -> None:
    client = RetrievalClient(exact_server.url)
    assert client.health()
    info = client.info()
    assert {k: info[k] for k in INFO} == INFO
    assert info["limits"]["max_k"] == ServerLimits().max_k
    assert set(info["stats"]) >= {"requests", "queries", "batches", "rejected"}


def test_concurrent_requests_are_merged_into_batches(server_extra: None, films: list[str]) -> None:
    retriever = ExactMatchRetriever(films[:200], delay_s=0.02)
    queries = film_queries(films[:200], 128, seed=1)
    # The slow back-end runs off the event loop, so requests keep arriving while a batch runs.
    with start(retriever, offload_search=True) as server:
        client = RetrievalClient(server.url)
        with ThreadPoolExecutor(16) as pool:
            results = list(pool.map(lambda q: client.search(q, 1 + len(q) % 5), queries))
        stats = server.stats
    assert results == [retriever.search(q, 1 + len(q) % 5) for q in queries]  # mixed k
    assert stats.requests == len(queries)
    # Merging happens; how much depends on scheduling (alone ~8 requests a batch, ~2 in a busy suite).
    assert stats.batches < stats.requests
    assert stats.largest_batch > 1 and max(retriever.calls) > 1


def test_back_end_failure_is_a_500_with_the_reason(server_extra: None) -> None:
    class Broken:
        def search(self, query: str, k: int) -> list[Hit]:
            raise KeyError("no index")

        def search_batch(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
            raise KeyError("no index")

    with start(Broken()) as server:
        client = RetrievalClient(server.url, retries=3)
        with pytest.raises(RetrievalError, match="KeyError.*no index") as info:
            client.search("heat", 2)
        assert not isinstance(info.value, RetrievalUnavailable)
        assert client.health()  # the server survives its back-end


# ---------------------------------------------------------------- bad requests

LIMITS = ServerLimits()


@pytest.mark.parametrize(
    ("body", "status", "reason"),
    [
        (b'{"queries": ["heat"], "k": 3', 400, "not valid UTF-8 JSON"),
        (b"\xff\xfe", 400, "not valid UTF-8 JSON"),
        (b'["heat"]', 422, "must be a JSON object"),
        (b'{"k": 3}', 422, "missing field(s) ['queries']"),
        (b'{"queries": ["heat"]}', 422, "missing field(s) ['k']"),
        (b'{"queries": ["heat"], "k": 3, "top": 1}', 422, "unknown field(s) ['top']"),
        (b'{"queries": "heat", "k": 3}', 422, "'queries' must be a list of strings"),
        (b'{"queries": ["heat", 7], "k": 3}', 422, "'queries'[1] must be a string, got int"),
        (
            b'{"queries": ["heat"], "k": "3"}',
            422,
            "'k' must be an integer between 1 and 100, got str",
        ),
        (
            b'{"queries": ["heat"], "k": true}',
            422,
            "'k' must be an integer between 1 and 100, got bool",
        ),
        (b'{"queries": ["heat"], "k": 0}', 422, "expected 1 <= k <= 100"),
        (
            json.dumps({"queries": ["heat"], "k": LIMITS.max_k + 1}).encode(),
            422,
            f"'k' is {LIMITS.max_k + 1}; expected 1 <= k <= {LIMITS.max_k}",
        ),
        (
            json.dumps({"queries": ["q"] * (LIMITS.max_queries_per_request + 1), "k": 1}).encode(),
            422,
            f"at most {LIMITS.max_queries_per_request} per request",
        ),
        (
            json.dumps({"queries": ["ok", "x" * (LIMITS.max_query_chars + 1)], "k": 1}).encode(),
            422,
            f"'queries'[1] has {LIMITS.max_query_chars + 1} characters; at most",
        ),
        (
            json.dumps({"queries": ["x" * LIMITS.max_body_bytes], "k": 1}).encode(),
            413,
            f"at most {LIMITS.max_body_bytes}",
        ),
    ],
    ids=[
        "truncated-json",
        "not-utf8",
        "not-object",
        "no-queries",
        "no-k",
        "unknown-field",
        "queries-str",
        "query-int",
        "k-str",
        "k-bool",
        "k-zero",
        "k-too-large",
        "too-many-queries",
        "query-too-long",
        "body-too-large",
    ],
)
def test_bad_request_gets_4xx_with_a_reason(
    exact_server: Any, body: bytes, status: int, reason: str
) -> None:
    got, payload = post(exact_server.url, body)
    assert got == status
    assert reason in payload["error"]


def test_oversized_body_is_refused_by_content_length(exact_server: Any) -> None:
    host, port = exact_server.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    conn.putrequest("POST", "/search")
    conn.putheader("Content-Length", str(LIMITS.max_body_bytes + 1))
    conn.endheaders()  # refused before the body is sent
    response = conn.getresponse()
    assert response.status == 413
    assert "at most" in json.loads(response.read())["error"]
    conn.close()


def test_unknown_path_and_method_get_json_errors(exact_server: Any) -> None:
    host, port = exact_server.url.removeprefix("http://").split(":")
    for method, path, status in (("GET", "/nope", 404), ("GET", "/search", 405)):
        conn = http.client.HTTPConnection(host, int(port), timeout=5)
        conn.request(method, path)
        response = conn.getresponse()
        assert response.status == status
        assert "endpoints are POST /search" in json.loads(response.read())["error"]
        conn.close()


def test_empty_query_list_is_answered_without_searching(exact_server: Any) -> None:
    assert post(exact_server.url, b'{"queries": [], "k": 5}')[1]["results"] == []


# ---------------------------------------------------------------- overload


def test_full_queue_answers_503_with_retry_after(server_extra: None) -> None:
    gate = threading.Event()
    retriever = ExactMatchRetriever(["a b", "b c"], gate=gate)
    limits = ServerLimits(max_inflight_queries=2, max_batch_queries=1, retry_after_s=1)
    with start(retriever, limits, offload_search=True) as server:
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(post, server.url, b'{"queries": ["a"], "k": 1}')
            deadline = time.monotonic() + 5
            while not retriever.calls and time.monotonic() < deadline:
                time.sleep(0.005)  # the first batch is now held at the gate
            status, payload = post(server.url, b'{"queries": ["b", "c"], "k": 1}')
            gate.set()
            assert first.result(timeout=5)[0] == 200
        assert status == 503
        assert payload["headers"]["retry-after"] == "1"
        assert "overloaded" in payload["error"]
        assert server.stats.rejected == 1


def test_client_retries_503_until_the_server_has_room(server_extra: None) -> None:
    gate = threading.Event()
    retriever = ExactMatchRetriever(["a b", "b c"], gate=gate)
    limits = ServerLimits(max_inflight_queries=1, max_batch_queries=1)
    with start(retriever, limits, offload_search=True) as server:
        blocker = RetrievalClient(server.url)
        patient = RetrievalClient(server.url, retries=20, backoff_s=0.01, max_retry_after_s=0.02)
        with ThreadPoolExecutor(2) as pool:
            first = pool.submit(blocker.search, "a", 1)
            deadline = time.monotonic() + 5
            while not retriever.calls and time.monotonic() < deadline:
                time.sleep(0.005)  # the first batch is now held at the gate
            second = pool.submit(patient.search, "b c", 2)
            time.sleep(0.1)  # long enough for a few 503s
            gate.set()
            assert first.result(timeout=5) == retriever.search("a", 1)
            assert second.result(timeout=5) == retriever.search("b c", 2)
        assert server.stats.rejected >= 1


# ---------------------------------------------------------------- worker processes


@contextlib.contextmanager
def forked_server() -> Iterator[tuple[subprocess.Popen[bytes], set[int]]]:
    """A 2-worker server in a subprocess, and the pids of its workers."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-c", ECHO_SERVER_SCRIPT, str(port)], stderr=subprocess.PIPE
    )
    try:
        RetrievalClient(f"http://127.0.0.1:{port}").wait_ready(timeout_s=20)
        pids = set()
        for i in range(40):  # each new connection is hashed to one of the workers
            client = RetrievalClient(f"http://127.0.0.1:{port}")
            assert client.search(f"q{i}", 2) == [Hit(f"q{i}", 0.0, 0), Hit(f"q{i}", 1.0, 1)]
            info = client.info()
            assert info["workers"] == 2
            pids.add(info["pid"])
            client.close()
        assert len(pids) == 2
        yield proc, pids
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=5)


def assert_gone(pids: set[int]) -> None:
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


needs_reuseport = pytest.mark.skipif(
    not hasattr(socket, "SO_REUSEPORT"), reason="needs SO_REUSEPORT"
)


@needs_reuseport
def test_forked_workers_share_the_port_and_stop_together(server_extra: None) -> None:
    with forked_server() as (proc, pids):
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
        assert_gone(pids)


# A dead worker is restarted: see test_server_hostile.py.


def test_serve_retrieval_command_end_to_end(server_extra: None) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agentenv.cli.serve_retrieval",
            "--corpus",
            "media",
            "--backend",
            "bm25",
            "--port",
            str(port),
            "--max-k",
            "20",
        ],
        stderr=subprocess.DEVNULL,
    )
    try:
        client = RetrievalClient(f"http://127.0.0.1:{port}")
        client.wait_ready(timeout_s=120)  # a cold cache builds the catalog and index
        info = client.info()
        assert (info["corpus"], info["backend"], info["documents"]) == ("media", "bm25", 17472)
        assert info["limits"]["max_k"] == 20 and info["params"]["k1"] > 0
        hits = client.search("Heat Al Pacino Robert De Niro Michael Mann", 5)
        assert len(hits) == 5 and [h.rank for h in hits] == list(range(5))
        assert hits[0].score >= hits[-1].score > 0
    finally:
        proc.terminate()
        proc.wait(10)


def test_benchmark_smoke(server_extra: None) -> None:
    """A tiny budget keeps benchmarks/retrieval_server.py from rotting (no timing asserted).

    ``--against`` the same checkout exercises the interleaved two-server run.
    """
    repo = Path(__file__).parents[2]
    done = subprocess.run(
        [
            sys.executable,
            str(repo / "benchmarks" / "retrieval_server.py"),
            "--seconds",
            "0.3",
            "--warmup",
            "0.1",
            "--settle",
            "0.1",
            "--passes",
            "2",
            "--clients",
            "4",
            "--rate",
            "200",
            "--against",
            str(repo),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "# machine: " in out and "load average" in out
    assert out.count("failed requests: 0") == 2
    assert "throughput:" in out and "p99" in out and "budget ratios:" in out
    assert "pass 2/2 this checkout" in out and f"pass 2/2 against {repo}" in out


# ---------------------------------------------------------------- hot path


def test_one_write_per_response_and_the_head_is_never_held_past_it() -> None:
    from agentenv.retrieval.connections import _OneWrite

    class Transport:
        def __init__(self) -> None:
            self.writes: list[bytes] = []
            self.closed = False

        def write(self, data: bytes) -> None:
            self.writes.append(data)

        def close(self) -> None:
            self.closed = True

        def is_closing(self) -> bool:
            return self.closed

        def get_extra_info(self, name: str) -> str:
            return f"info:{name}"

    class Cycle:
        response_started = False
        scope = {"method": "GET"}

    # 100-continue (before the response starts) goes out at once; head + body as one write.
    transport, cycle = Transport(), Cycle()
    wrapped = _OneWrite(transport, cycle)
    wrapped.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    cycle.response_started = True
    wrapped.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
    assert transport.writes == [b"HTTP/1.1 100 Continue\r\n\r\n"]
    wrapped.write(b"{}")
    wrapped.write(b"more")  # later body chunks pass straight through
    assert transport.writes[1:] == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}", b"more"]
    assert wrapped.get_extra_info("peername") == "info:peername" and not wrapped.is_closing()

    # A HEAD's answer has no body write: its head leaves at once.
    transport, cycle = Transport(), Cycle()
    cycle.scope = {"method": "HEAD"}
    wrapped = _OneWrite(transport, cycle)
    cycle.response_started = True
    wrapped.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
    assert transport.writes == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n"]

    # A response that starts and then fails: closing flushes the head first.
    transport, cycle = Transport(), Cycle()
    wrapped = _OneWrite(transport, cycle)
    cycle.response_started = True
    wrapped.write(b"HTTP/1.1 200 OK\r\n\r\n")
    wrapped.close()
    assert transport.writes == [b"HTTP/1.1 200 OK\r\n\r\n"] and transport.closed


def test_the_real_server_writes_each_response_once(
    server_extra: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Status line, headers and body leave in one write (uvicorn alone makes two)."""
    from agentenv.retrieval import connections

    writes: list[bytes] = []

    class Counting:
        def __init__(self, transport: Any) -> None:
            self.transport = transport

        def write(self, data: bytes) -> None:
            writes.append(data)
            self.transport.write(data)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.transport, name)

    wrap = connections._OneWrite.__init__
    monkeypatch.setattr(
        connections._OneWrite,
        "__init__",
        lambda self, transport, cycle: wrap(self, Counting(transport), cycle),
    )
    with start(ExactMatchRetriever(["heat wave", "cold"])) as server:
        host, port = server.url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=5)
        for body in (b'{"queries": ["heat"], "k": 1}', b'{"queries": [], "k": 1}', b"{"):
            conn.request("POST", "/search", body=body)  # one keep-alive connection
            response = conn.getresponse()
            assert json.loads(response.read())
        conn.request("GET", "/health")
        assert json.loads(conn.getresponse().read()) == {"status": "ok"}
        conn.close()
    assert len(writes) == 4
    assert all(w.startswith(b"HTTP/1.1 ") and w.endswith((b"}", b"]}")) for w in writes)


def test_a_bug_on_the_search_path_still_answers_json_500(
    server_extra: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentenv.retrieval import server_app

    def broken(body: bytes, limits: ServerLimits) -> tuple[list[str], int]:
        raise AttributeError("a bug")

    monkeypatch.setattr(server_app, "parse_search_body", broken)  # where the app looks it up
    with start(ExactMatchRetriever(["a"])) as server:
        status, payload = post(server.url, b'{"queries": ["a"], "k": 1}')
        assert (status, payload["error"]) == (500, "internal error: AttributeError")
        assert RetrievalClient(server.url).health()


def test_hit_encoder_matches_encode_hits_byte_for_byte() -> None:
    from agentenv.retrieval.batching import HitEncoder, encode_hits

    encoder = HitEncoder(max_cached_ids=3)  # small: the cache empties and refills
    hits = [
        Hit("d1", 2.5, 0),
        Hit('say "hi"\u2028é', 1e300, 1),
        Hit("d1", float("inf"), 2),
        Hit("nan", float("nan"), 3),
        Hit("neg", -0.0, 255),
        Hit("big-rank", 1.0, 300),
        Hit("np", np.float64(0.1) + np.float64(0.2), np.int64(4)),
        Hit("f32", np.float32(1.1), 5),
        Hit("int-score", 3, 6),  # type: ignore[arg-type]
        Hit(7, 1.5, 7),
        Hit("neg-rank", 1.0, -1),
    ]  # type: ignore[arg-type]
    for start_at in range(len(hits)):
        for stop_at in range(start_at, len(hits) + 1):
            for _ in range(2):  # cold, then cached
                assert encoder.encode(hits[start_at:stop_at]) == encode_hits(hits[start_at:stop_at])
    assert encoder.encode([Hit("x", 1e308, 0), Hit("y", 1e308, 1)]) == encode_hits(
        [Hit("x", 1e308, 0), Hit("y", 1e308, 1)]
    )  # the scores' sum overflows


def test_the_batcher_waits_for_company_only_when_idle() -> None:
    """Under load a batch starts at once: a window restarting after every batch delayed every query."""
    retriever = ExactMatchRetriever(["a b", "b c"])

    async def scenario() -> tuple[float, float]:
        batcher = MicroBatcher(retriever, max_wait_s=1.0)
        await batcher.start()
        await asyncio.sleep(0.01)  # the consumer is up and idle
        began = time.monotonic()
        await batcher.submit(["a"], 1)  # idle: waits the window for company
        idle = time.monotonic() - began
        began = time.monotonic()
        await batcher.submit(["b"], 1)  # a batch just ended: no window
        busy = time.monotonic() - began
        await batcher.stop()
        return idle, busy

    idle, busy = asyncio.run(scenario())
    assert idle >= 0.9 and busy < 0.5


# ---------------------------------------------------------------- no extra needed


def test_batcher_merges_and_bounds_without_a_server() -> None:
    retriever = ExactMatchRetriever(["a b", "b c", "c d"])

    async def scenario() -> tuple[list[list[bytes]], int]:
        batcher = MicroBatcher(
            retriever, max_batch_queries=8, max_wait_s=0.01, max_inflight_queries=4
        )
        await batcher.start()
        futures = [batcher.submit(["a"], 2), batcher.submit(["b", "c"], 2)]
        with pytest.raises(Overloaded):
            batcher.submit(["x", "y"], 2)  # 3 in flight + 2 > 4
        results = await asyncio.gather(*futures)
        await batcher.stop()
        return results, batcher.stats.batches

    results, batches = asyncio.run(scenario())
    assert batches == 1 and retriever.calls == [3]
    assert [json.loads(r) for r in results[1]] == [
        [h._asdict() for h in retriever.search(q, 2)] for q in ("b", "c")
    ]


def test_server_module_imports_without_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentenv.retrieval import server

    monkeypatch.setitem(sys.modules, "starlette", None)
    with pytest.raises(ImportError, match="'server' extra"):
        server.create_app(ExactMatchRetriever(["a"]), INFO)


def test_limits_reject_nonsense() -> None:
    with pytest.raises(ValueError, match="max_k must be positive"):
        ServerLimits(max_k=0)
    assert ServerLimits(max_wait_ms=0).max_wait_ms == 0


def test_a_request_at_the_limits_cannot_starve_a_small_one() -> None:
    """256 queries of 2,048 characters are answered one per batch, every other batch; a one-word request
    that arrives meanwhile is answered by the next batch, with at most one long query beside it."""
    retriever = ExactMatchRetriever(["a b", "b c"])
    batches: list[list[str]] = []
    search_batch = retriever.search_batch

    def recording(queries: Sequence[str], k: int) -> list[list[Hit]]:
        batches.append(list(queries))
        return search_batch(queries, k)

    retriever.search_batch = recording  # type: ignore[method-assign]
    long_query = ("a b c " * 400)[:2048]

    async def scenario() -> tuple[int, bool]:
        batcher = MicroBatcher(retriever, max_wait_s=0.0)
        await batcher.start()
        greedy = batcher.submit([long_query] * 256, 100)
        await asyncio.sleep(0)
        await asyncio.sleep(0)  # a batch or two of the greedy request has run
        before = len(batches)
        await batcher.submit(["b"], 5)
        answered_after = len(batches) - before
        results = await greedy
        await batcher.stop()
        return answered_after, len(results) == 256

    answered_after, complete = asyncio.run(scenario())
    assert complete
    assert answered_after <= 2  # the small request's batch, and at most one before it
    assert all(sum(q == long_query for q in batch) <= 1 for batch in batches)
    assert sum(q == long_query for batch in batches for q in batch) == 256


def test_a_batch_is_capped_by_the_postings_its_queries_read_not_by_their_number() -> None:
    """With a back-end that counts its postings (BM25), frequent-term queries split into several batches
    while as many rare-term queries share one."""
    from agentenv.retrieval.batching import HIT_COST, QUERY_OVERHEAD
    from agentenv.retrieval.bm25 import BM25Retriever

    texts = [f"common doc{i}" for i in range(20_000)]  # "common" reads 20,000 postings, "doc7" one
    retriever = BM25Retriever.from_texts(texts)
    sizes: list[int] = []
    search_batch = retriever.search_batch

    def recording(queries: Sequence[str], k: int) -> list[list[Hit]]:
        sizes.append(len(queries))
        return search_batch(queries, k)

    retriever.search_batch = recording  # type: ignore[method-assign]
    one_common = retriever.query_work("common") + QUERY_OVERHEAD + HIT_COST

    async def run(queries: list[str]) -> list[bytes]:
        batcher = MicroBatcher(retriever, max_wait_s=0.0, max_batch_cost=4 * one_common)
        await batcher.start()
        answers = await batcher.submit(queries, 1)
        await batcher.stop()
        return answers

    answers = asyncio.run(run(["common"] * 8))
    assert (
        len(answers) == 8 and len(sizes) == 2 and max(sizes) <= 5
    )  # 4 fit; a fifth may join (see _take)
    sizes.clear()
    rare = [f"doc{i}" for i in range(8)]
    answers = asyncio.run(run(rare))
    assert sizes == [8]
    assert [json.loads(a)[0]["doc_id"] for a in answers] == [str(i) for i in range(8)]
