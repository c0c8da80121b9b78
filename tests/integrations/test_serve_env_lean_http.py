"""The lean HTTP cycle of ``POST /get_observation`` answers byte for byte as uvicorn's ASGI cycle does.

Two servers over the same env id, one with the lean path (as ``serve-env`` runs) and one whose app
hides its routes so every request takes uvicorn's own cycle, get the same raw requests; their
answers must be the same bytes (the ``date`` header aside). Then the HTTP corners the lean path
handles itself: pipelined requests, ``Expect: 100-continue``, HTTP/1.0, a chunked body past the
limit, a client that leaves mid-request.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("httptools")

import agentenv  # noqa: E402, F401 - registers the ids
from agentenv.engine.actions import answer, tool_call  # noqa: E402
from agentenv.integrations.serve_env.lean_http import hot_paths  # noqa: E402
from agentenv.integrations.serve_env.limits import EnvServerLimits  # noqa: E402
from agentenv.integrations.serve_env.runner import BackgroundServer  # noqa: E402
from agentenv.integrations.verl_tool import create_app  # noqa: E402

from .raw_http import plain_cycle, read_answers, undated  # noqa: E402

LIMITS = EnvServerLimits(max_live_envs=8, max_body_bytes=4096, header_timeout_s=2.0)


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[BackgroundServer, BackgroundServer]]:
    lean_app = create_app("MediaSearch-v0", split="test", limits=LIMITS)
    plain_app = create_app("MediaSearch-v0", split="test", limits=LIMITS)
    assert hot_paths(lean_app) == ("/get_observation",) and hot_paths(plain_cycle(plain_app)) == ()
    with (
        BackgroundServer(lean_app, LIMITS) as lean,
        BackgroundServer(plain_cycle(plain_app), LIMITS) as plain,
    ):
        yield lean, plain


def _connect(server: BackgroundServer) -> socket.socket:
    host, port = server.url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def _post(body: bytes, path: str = "/get_observation", extra: str = "") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{extra}"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def _request(payload: dict) -> bytes:
    return _post(json.dumps(payload).encode())


REQUESTS = [
    _request(
        {
            "trajectory_ids": ["a", "b"],
            "actions": [tool_call("search", query="heat"), "hi"],
            "extra_fields": [{"seed": 1, "index": 0}, {"seed": 2, "index": 3}],
        }
    ),
    _request({"trajectory_ids": ["a"], "actions": [answer("Heat")]}),
    _request({"trajectory_ids": ["a"], "actions": ["late"]}),  # ended: an error observation
    _request({"trajectory_ids": ["b"], "actions": [""], "finish": [True]}),
    _request({"trajectory_ids": ["c"], "actions": ["x"], "extra_fields": [{"seed": "3"}]}),  # 422
    _request(
        {
            "trajectory_ids": ["d"],
            "actions": [tool_call("search", query="é" * 40)],
            "extra_fields": [{"index": 1, "return_messages": True}],
        }
    ),
    _request({"trajectory_ids": ["d"], "actions": [answer("ünïcode")]}),
    _request({"trajectory_ids": "d", "actions": []}),  # 422
    _post(b'{"trajectory_ids": ["e"], "actions": ['),  # 400: not JSON
    _post(b"[1, 2]"),  # 422: not an object
    _post(b'{"trajectory_ids": ["f"], "actions": ["' + b"y" * 5000 + b'"]}'),  # 413 from the header
    _post(b"{}", path="/get_observation?x=1"),  # 404 (a query string: uvicorn's cycle on both)
    b"GET /get_observation HTTP/1.1\r\nHost: x\r\n\r\n",  # 405
    b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n",
]


def test_the_lean_path_answers_every_request_with_uvicorns_bytes(servers: Any) -> None:
    lean, plain = servers
    with _connect(lean) as a, _connect(plain) as b:
        for request in REQUESTS:
            a.sendall(request)
            b.sendall(request)
            (got,), (expected,) = read_answers(a, 1), read_answers(b, 1)
            assert undated(got) == undated(expected), request[:120]
            assert b"\r\ndate: " in got  # uvicorn's default header is kept


def test_pipelined_requests_are_answered_in_order(servers: Any) -> None:
    lean, _ = servers
    ids = [f"p{i}" for i in range(4)]
    batch = (
        b"".join(
            _request(
                {"trajectory_ids": [tid], "actions": ["hello"], "extra_fields": [{"index": i}]}
            )
            for i, tid in enumerate(ids)
        )
        + b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
        + _request({"trajectory_ids": ids, "actions": [""] * 4, "finish": [True] * 4})
    )
    with _connect(lean) as sock:
        sock.sendall(batch)
        answers = read_answers(sock, 6)
    assert all(a.startswith(b"HTTP/1.1 200 ") for a in answers)
    assert answers[4].endswith(b'{"status":"healthy"}')
    assert json.loads(answers[5].split(b"\r\n\r\n", 1)[1])["dones"] == [True] * 4


def test_expect_100_continue_is_answered_before_the_body(servers: Any) -> None:
    lean, _ = servers
    body = json.dumps({"trajectory_ids": ["x1"], "actions": [""], "finish": [True]}).encode()
    with _connect(lean) as sock:
        sock.sendall(_post(body, extra="Expect: 100-continue\r\n")[: -len(body)])
        assert sock.recv(1 << 16) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(body)
        (got,) = read_answers(sock, 1)
    assert got.startswith(b"HTTP/1.1 200 ")


def test_http_1_0_closes_after_its_answer(servers: Any) -> None:
    lean, _ = servers
    body = json.dumps({"trajectory_ids": ["y1"], "actions": [""], "finish": [True]}).encode()
    with _connect(lean) as sock:
        sock.sendall(_post(body).replace(b"HTTP/1.1", b"HTTP/1.0", 1))
        (got,) = read_answers(sock, 1)
        assert b"\r\nconnection: close\r\n" in got
        assert sock.recv(1 << 16) == b""  # closed by the server


@pytest.mark.parametrize(
    ("version", "header"),
    [
        (b"HTTP/1.0", "Connection: keep-alive\r\n"),
        (b"HTTP/1.0", "Proxy-Connection: Keep-Alive\r\n"),
        (b"HTTP/1.1", "Connection: close\r\n"),
    ],
)
def test_a_connection_header_closes_as_uvicorn_closes(
    servers: Any, version: bytes, header: str
) -> None:
    """HTTP/1.0 asking to be kept alive is closed after its answer (uvicorn keeps only 1.1 alive),
    on both paths; the lean cycle reads the version only when such a header is there."""
    for n, server in enumerate(servers):
        body = json.dumps(
            {
                "trajectory_ids": [f"k{n}{version[-1]}{len(header)}"],
                "actions": [""],
                "finish": [True],
            }
        ).encode()
        with _connect(server) as sock:
            sock.sendall(_post(body, extra=header).replace(b"HTTP/1.1", version, 1))
            (got,) = read_answers(sock, 1)
            assert got.startswith(b"HTTP/1.1 200 ")
            assert b"\r\nconnection: close\r\n" in got
            assert sock.recv(1 << 16) == b""  # closed by the server


def test_a_chunked_body_past_the_limit_is_refused_413(servers: Any) -> None:
    lean, _ = servers
    head = b"POST /get_observation HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    chunk = b"a" * 3000
    with _connect(lean) as sock:
        sock.sendall(head + b"%x\r\n%s\r\n" % (len(chunk), chunk) * 2)
        (got,) = read_answers(sock, 1)
    assert got.startswith(b"HTTP/1.1 413 ") and b"exceeds 4096 bytes" in got


def test_a_client_leaving_mid_request_leaves_the_server_serving(servers: Any) -> None:
    lean, _ = servers
    body = json.dumps({"trajectory_ids": ["z1"], "actions": ["hi"]}).encode()
    for cut in (10, len(_post(body)) - 5, len(_post(body))):
        with _connect(lean) as sock:
            sock.sendall(_post(body)[:cut])
    time.sleep(0.1)
    with _connect(lean) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        (got,) = read_answers(sock, 1)
    assert got.startswith(b"HTTP/1.1 200 ")


def test_answers_of_many_connections_in_one_turn_each_reach_their_own(servers: Any) -> None:
    """Answers queued in one turn of the loop (turn_batch.py) leave on their own connections, in
    order, and say the same as one connection's answers do."""
    lean, plain = servers
    n = 4  # the servers cap live trajectories at 8, and other tests leave some
    first = [
        _request(
            {
                "trajectory_ids": [f"m{i}"],
                "actions": [tool_call("search", query=f"heat {1990 + i}")],
                "extra_fields": [{"seed": i, "index": i}],
            }
        )
        for i in range(n)
    ]
    second = [
        _request({"trajectory_ids": [f"m{i}"], "actions": [answer("Heat")]}) for i in range(n)
    ]
    socks = [_connect(lean) for _ in range(n)]
    try:
        for round_ in (first, second):
            for sock, request in zip(socks, round_, strict=True):
                sock.sendall(request)  # all in flight at once: read by the server in few turns
            got = [read_answers(sock, 1)[0] for sock in socks]
            with _connect(plain) as one:
                expected = []
                for request in round_:
                    one.sendall(request.replace(b'"m', b'"q'))
                    expected.append(read_answers(one, 1)[0])
            assert [undated(g) for g in got] == [undated(e) for e in expected]
    finally:
        for sock in socks:
            sock.close()


def test_a_lean_answer_leaves_after_the_turn_that_made_it() -> None:
    """The bytes are queued, not written, by the call that answered; the loop's next turn sends them."""
    import asyncio
    from types import SimpleNamespace

    from agentenv.integrations.serve_env import lean_http
    from agentenv.integrations.serve_env.turn_batch import turn_of

    lean_http._STATUS_LINE.update(lean_http._status_lines())

    class Transport:
        def __init__(self) -> None:
            self.sent: list[bytes] = []

        def write(self, data: bytes) -> None:
            self.sent.append(data)

        def is_closing(self) -> bool:
            return False

        def close(self) -> None:
            raise AssertionError("a kept-alive connection is not closed")

    async def answered() -> tuple[list[bytes], list[bytes]]:
        transport, completed = Transport(), []
        protocol = SimpleNamespace(
            loop=asyncio.get_running_loop(),
            lean_turn=turn_of(asyncio.get_running_loop()),
            transport=transport,
            server_state=SimpleNamespace(default_headers=[(b"server", b"x")]),
            lean_cycle=None,
            on_response_complete=lambda: completed.append(True),
        )
        cycle = lean_http.LeanCycle(protocol, keep_alive=True)
        cycle.answer_json(200, b'{"observations": []}')
        during = list(transport.sent)
        assert completed == [True] and cycle.response_complete
        await asyncio.sleep(0)
        return during, transport.sent

    during, after = asyncio.run(answered())
    assert during == []
    assert len(after) == 1 and after[0].startswith(b"HTTP/1.1 200 OK\r\nserver: x\r\n")
    assert after[0].endswith(b'\r\n\r\n{"observations": []}')
