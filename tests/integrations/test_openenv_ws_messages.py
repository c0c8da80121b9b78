"""``serve-env --protocol openenv``: a WebSocket message OpenEnv's handler cannot read is answered
with an error naming what was expected, and the session goes on.

OpenEnv's handler ended the session (``SESSION_ERROR``, its env closed) over a JSON value that is
not an object, a binary message, or an array nested past the recursion limit.

And an HTTP ``POST`` asking for a WebSocket upgrade (a WebSocket opens with a ``GET``) is served as
plain HTTP; it was handed to the WebSocket protocol, which answered 400.
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator

import pytest

pytest.importorskip("openenv")
pytest.importorskip("websockets")

import agentenv  # noqa: E402, F401 - registers the ids
from agentenv.engine.actions import tool_call  # noqa: E402
from agentenv.integrations.openenv import create_app  # noqa: E402
from agentenv.integrations.serve_env.limits import EnvServerLimits  # noqa: E402
from agentenv.integrations.serve_env.runner import BackgroundServer  # noqa: E402

LIMITS = EnvServerLimits(max_live_envs=2, max_body_bytes=65536)
RESET = json.dumps({"type": "reset", "data": {"seed": 0, "index": 1}})
STEP = json.dumps({"type": "step", "data": {"text": tool_call("search", query="heat")}})
EXPECTED = 'expected a JSON object with a "type" field (reset, step, state, close or mcp)'


@pytest.fixture(scope="module")
def ws_url() -> Iterator[str]:
    with BackgroundServer(
        create_app("MediaSearch-v0", split="test", limits=LIMITS), LIMITS, websockets=True
    ) as running:
        yield running.url.replace("http://", "ws://") + "/ws"


@pytest.mark.parametrize(
    ("message", "says", "code"),
    [
        ("[1, 2]", "the message is a JSON list, not an object", "VALIDATION_ERROR"),
        ('"x"', "the message is a JSON str, not an object", "VALIDATION_ERROR"),
        ("5", "the message is a JSON int, not an object", "VALIDATION_ERROR"),
        (" null", "the message is a JSON null, not an object", "VALIDATION_ERROR"),
        ("[" * 5000, "the message is not valid JSON (nested too deeply)", "INVALID_JSON"),
        (b"\x00{}", "the message is binary (3 bytes), not text", "INVALID_JSON"),
    ],
    ids=["list", "string", "number", "null", "nested", "binary"],
)
def test_a_message_that_is_no_json_object_leaves_the_session_open(
    ws_url: str, message: str | bytes, says: str, code: str
) -> None:
    from websockets.sync.client import connect

    with connect(ws_url) as ws:
        ws.send(RESET)
        assert json.loads(ws.recv(timeout=10))["type"] == "observation"
        ws.send(message)
        error = json.loads(ws.recv(timeout=10))
        assert error == {"type": "error", "data": {"message": f"{says}; {EXPECTED}", "code": code}}
        ws.send(STEP)  # the same session and env: the episode started above goes on
        stepped = json.loads(ws.recv(timeout=10))
        assert stepped["type"] == "observation", stepped
        ws.send(RESET)
        assert json.loads(ws.recv(timeout=10))["type"] == "observation"


def test_text_that_is_not_json_is_still_openenvs_invalid_json(ws_url: str) -> None:
    """Text OpenEnv's handler already answers (and whose session it keeps) is left to it."""
    from websockets.sync.client import connect

    with connect(ws_url) as ws:
        ws.send("hello")
        error = json.loads(ws.recv(timeout=10))
        assert (
            error["data"]["code"] == "INVALID_JSON" and "Invalid JSON" in error["data"]["message"]
        )
        ws.send(RESET)
        assert json.loads(ws.recv(timeout=10))["type"] == "observation"


def _answer(sock: socket.socket) -> bytes:
    """One whole answer (content-length framed), its date header left out."""
    data, length = b"", None
    while length is None or len(data) < length:
        chunk = sock.recv(1 << 16)
        assert chunk, data[:300]
        data += chunk
        end = data.find(b"\r\n\r\n")
        if end >= 0:
            size = re.search(rb"content-length: (\d+)", data[:end], re.IGNORECASE)
            length = end + 4 + int(size.group(1))  # type: ignore[union-attr]
    return re.sub(rb"date: [^\r]*\r\n", b"", data)


def test_a_post_asking_for_a_websocket_is_served_as_plain_http(ws_url: str) -> None:
    host, port = ws_url.removeprefix("ws://").removesuffix("/ws").split(":")
    body = json.dumps({"seed": 0, "index": 1}).encode()
    upgrade = (
        "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
    )
    answers = []
    for extra in ("", upgrade):
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(
                f"POST /reset HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{extra}"
                f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            answers.append(_answer(sock))
    assert answers[0].startswith(b"HTTP/1.1 200 ") and answers[1] == answers[0]


@pytest.mark.slow
def test_clients_that_read_nothing_back_cannot_keep_another_from_starting() -> None:
    """A client that sends and never reads left OpenEnv's handler waiting in a reply's send,
    where neither the idle timeout nor eviction reached it: two such sessions kept both env
    slots, and another client waited the whole eviction bound (5 s) and got no session. Now a
    reply not taken gives up (at the idle timeout, or at once when the session is taken back)."""
    import asyncio
    import time

    import websockets

    limits = EnvServerLimits(max_live_envs=2, max_body_bytes=65536, idle_timeout_s=3.0)
    state = json.dumps({"type": "state"})

    async def stuck_client(url: str) -> object:
        stuck = await websockets.connect(url, max_queue=1, max_size=None)
        await stuck.send(RESET)
        began = time.monotonic()
        try:  # until the server's replies fill every buffer and this client's sends block too
            while time.monotonic() - began < 6:
                await asyncio.wait_for(stuck.send(state), 0.5)
        except (asyncio.TimeoutError, websockets.exceptions.ConnectionClosed):
            pass  # blocked, or already given up on by the server
        return stuck

    async def scene(url: str) -> tuple[str, float]:
        stuck = await asyncio.gather(stuck_client(url), stuck_client(url))
        began = time.monotonic()
        # another client (another address: one client's sessions share its own slots)
        async with websockets.connect(url, open_timeout=15, local_addr=("127.0.0.2", 0)) as other:
            await other.send(RESET)
            reply = json.loads(await asyncio.wait_for(other.recv(), 15))
        for connection in stuck:
            connection.transport.abort()  # type: ignore[attr-defined]
        kind = "observation" if reply["type"] == "observation" else str(reply)[:300]
        return kind, time.monotonic() - began

    with BackgroundServer(
        create_app("MediaSearch-v0", split="test", limits=limits), limits, websockets=True
    ) as running:
        kind, waited = asyncio.run(scene(running.url.replace("http://", "ws://") + "/ws"))
    assert kind == "observation" and waited < 4.0, (kind, waited)
