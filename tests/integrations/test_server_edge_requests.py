"""HTTP corners shared by ``serve-env`` (its lean cycle and uvicorn's) and ``serve-retrieval``.

* A ``POST`` with an ``Upgrade`` the server does not perform (``h2c``; ``websocket`` without
  WebSockets) is served as if the header were absent (RFC 9110, 7.8): llhttp had left its body
  unread, and the request was answered 400 as if empty.
* A request refused by its ``Content-Length`` (413) before its body is in closes its
  connection: kept alive, the body sent after the answer was read as the next head (a 431).
  It closes in stages, so a client that sends the whole body before reading still reads the 413.
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator, Sequence

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("httptools")

import agentenv  # noqa: E402, F401 - registers the ids
from agentenv.integrations.serve_env.limits import EnvServerLimits  # noqa: E402
from agentenv.integrations.serve_env.runner import BackgroundServer  # noqa: E402
from agentenv.integrations.verl_tool import create_app  # noqa: E402
from agentenv.retrieval.base import Hit  # noqa: E402
from agentenv.retrieval.server import BackgroundServer as RetrievalServer  # noqa: E402
from agentenv.retrieval.server import ServerLimits  # noqa: E402

from .raw_http import plain_cycle, read_answers, undated  # noqa: E402

LIMITS = EnvServerLimits(max_live_envs=8, max_body_bytes=4096, header_timeout_s=2.0)
FINISH = json.dumps({"trajectory_ids": ["u1"], "actions": [""], "finish": [True]}).encode()
SEARCH = json.dumps({"queries": ["heat"], "k": 2}).encode()
UPGRADES = [
    "Upgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n",
    "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n",
    "Connection: keep-alive, Upgrade\r\nUpgrade: TLS/1.2\r\n",
]


class Echo:
    """Answers each query with itself: results are checkable without an index."""

    def search(self, query: str, k: int) -> list[Hit]:
        return [Hit(query, float(i), i) for i in range(k)]

    def search_batch(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        return [self.search(q, k) for q in queries]


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, tuple[str, str, bytes]]]:
    """Each server by name: (url, its POST path, a body it answers 200)."""
    lean_app = create_app("MediaSearch-v0", split="test", limits=LIMITS)
    plain_app = plain_cycle(create_app("MediaSearch-v0", split="test", limits=LIMITS))
    with (
        BackgroundServer(lean_app, LIMITS) as lean,
        BackgroundServer(plain_app, LIMITS) as plain,
        RetrievalServer(Echo(), {"corpus": "echo"}, limits=ServerLimits(max_body_bytes=4096)) as r,
    ):
        yield {
            "serve-env lean": (lean.url, "/get_observation", FINISH),
            "serve-env uvicorn": (plain.url, "/get_observation", FINISH),
            "serve-retrieval": (r.url, "/search", SEARCH),
        }


def _connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=5)


def _post(path: str, body: bytes, extra: str = "", length: int | None = None) -> bytes:
    size = len(body) if length is None else length
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{extra}"
        f"Content-Length: {size}\r\n\r\n"
    ).encode() + body


def _rest_until_closed(sock: socket.socket) -> bytes:
    """What the server sends until it closes (a reset counts as closed)."""
    data = b""
    try:
        while chunk := sock.recv(1 << 16):
            data += chunk
    except ConnectionResetError:
        pass
    return data


@pytest.mark.parametrize("name", ["serve-env lean", "serve-env uvicorn", "serve-retrieval"])
@pytest.mark.parametrize("upgrade", UPGRADES, ids=["h2c", "websocket", "tls"])
def test_an_upgrade_not_performed_on_a_post_is_ignored(
    servers: dict[str, tuple[str, str, bytes]], name: str, upgrade: str
) -> None:
    """The same answer bytes as without the header, for a 200 and a 422, and the connection
    goes on: a request pipelined behind it (with the header too) is answered."""
    url, path, body = servers[name]
    requests = [(path, body), (path, b"[1, 2]")]
    with _connect(url) as plain, _connect(url) as upgrading:
        for path_, body_ in requests:
            plain.sendall(_post(path_, body_))
            upgrading.sendall(_post(path_, body_, upgrade) + _post(path_, body_, upgrade))
            (expected,) = read_answers(plain, 1)
            got = read_answers(upgrading, 2)
            assert [undated(a) for a in got] == [undated(expected)] * 2, upgrade
        assert expected.startswith(b"HTTP/1.1 422 ")


@pytest.mark.parametrize("name", ["serve-env lean", "serve-env uvicorn", "serve-retrieval"])
def test_a_413_by_content_length_closes_the_connection(
    servers: dict[str, tuple[str, str, bytes]], name: str
) -> None:
    """The answer says ``connection: close`` and the server closes: the body the client sends
    after it is never read as a request (it was answered 431)."""
    url, path, _ = servers[name]
    body = b"y" * 100_000
    with _connect(url) as sock:
        sock.sendall(_post(path, b"", length=len(body)))
        (answer,) = read_answers(sock, 1)
        assert answer.startswith(b"HTTP/1.1 413 ") and b"at most 4096" in answer
        assert b"\r\nconnection: close\r\n" in answer.split(b"\r\n\r\n")[0] + b"\r\n"
        try:
            sock.sendall(body)
        except OSError:  # the server has closed: a reset, or a broken pipe
            pass
        rest = _rest_until_closed(sock)
    assert rest == b"", rest[:200]


def test_the_lean_413_is_uvicorns_413(servers: dict[str, tuple[str, str, bytes]]) -> None:
    """Both cycles of serve-env answer a refused ``Content-Length`` with the same bytes."""
    answers = []
    for name in ("serve-env lean", "serve-env uvicorn"):
        url, path, _ = servers[name]
        with _connect(url) as sock:
            sock.sendall(_post(path, b"", length=100_000))
            answers.append(undated(read_answers(sock, 1)[0]))
            assert _rest_until_closed(sock) == b""
    assert answers[0] == answers[1]


@pytest.mark.parametrize("name", ["serve-env lean", "serve-env uvicorn", "serve-retrieval"])
def test_a_client_sending_the_whole_body_first_reads_the_413(
    servers: dict[str, tuple[str, str, bytes]], name: str
) -> None:
    """``http.client`` sends all of the body before it reads: the server drops what it does not
    read instead of resetting the connection under it."""
    url, path, _ = servers[name]
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        conn.request("POST", path, body=b"y" * 1_000_000)
        response = conn.getresponse()
        assert response.status == 413 and response.getheader("connection") == "close"
        assert "at most 4096" in json.loads(response.read())["error"]
    finally:
        conn.close()


@pytest.mark.parametrize("name", ["serve-env lean", "serve-env uvicorn", "serve-retrieval"])
@pytest.mark.parametrize(
    ("version", "connection"),
    [("1.1", "close, Upgrade"), ("1.0", "Upgrade")],
    ids=["connection-close", "http-1.0"],
)
def test_an_ignored_upgrade_on_a_request_that_ends_its_connection_is_answered(
    servers: dict[str, tuple[str, str, bytes]], name: str, version: str, connection: str
) -> None:
    """The parser had ended the message and dropped the head read again without the header (the
    client waited for the header timeout's 408); a new parser reads it."""
    url, path, body = servers[name]
    request = (
        f"POST {path} HTTP/{version}\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Connection: {connection}\r\nUpgrade: h2c\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    with _connect(url) as sock:
        sock.sendall(request)
        (answer,) = read_answers(sock, 1)
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]


@pytest.mark.parametrize("name", ["serve-env lean", "serve-env uvicorn", "serve-retrieval"])
def test_an_upgrade_token_in_one_of_two_connection_headers_does_not_lose_the_body(
    servers: dict[str, tuple[str, str, bytes]], name: str
) -> None:
    """llhttp takes ``upgrade`` from any ``Connection`` header, uvicorn from the last: the
    request got a cycle with an empty body (400), and a body that came later ran as a request of
    its own. Now it is answered as without the header, and so is the request behind it."""
    url, path, body = servers[name]
    extra = "Connection: upgrade\r\nUpgrade: h2c\r\nConnection: keep-alive\r\n"
    with _connect(url) as plain, _connect(url) as upgrading:
        plain.sendall(_post(path, body))
        (expected,) = read_answers(plain, 1)
        head = _post(path, body, extra)
        upgrading.sendall(head[: -len(body)])  # the body in a later read
        upgrading.sendall(body + _post(path, body))
        got = read_answers(upgrading, 2)
    assert [undated(a) for a in got] == [undated(expected)] * 2


def test_a_lean_413_with_a_request_pipelined_behind_it_is_the_413(
    servers: dict[str, tuple[str, str, bytes]],
) -> None:
    """The 413's task read the path and headers when it ran, by then the next request's: it was
    answered 405 (`/health takes GET`)."""
    url, path, _ = servers["serve-env lean"]
    with _connect(url) as sock:
        sock.sendall(_post(path, b"z" * 5000) + b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = read_answers(sock, 1)[0]
    assert first.startswith(b"HTTP/1.1 413 "), first[:200]


def test_a_lingering_connection_closes_once_it_has_dropped_its_cap(
    servers: dict[str, tuple[str, str, bytes]],
) -> None:
    """A client streaming on after a 413 is cut off after LINGER_BYTES, not after 2 s of it."""
    import time

    from agentenv.retrieval.connections import LINGER_BYTES

    url, path, _ = servers["serve-env lean"]
    with _connect(url) as sock:
        sock.sendall(_post(path, b"", length=1 << 30))
        (answer,) = read_answers(sock, 1)
        assert answer.startswith(b"HTTP/1.1 413 ")
        chunk, sent, began = b"q" * (1 << 20), 0, time.monotonic()
        try:
            while sent <= 4 * LINGER_BYTES and time.monotonic() - began < 1.5:
                sock.sendall(chunk)
                sent += len(chunk)
        except OSError:  # closed under the sender: a reset or a broken pipe
            pass
    assert sent <= 2 * LINGER_BYTES, f"still open after {sent >> 20} MiB"
