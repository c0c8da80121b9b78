"""Answers the lean cycle writes without the ASGI call are uvicorn's bytes too: a 503, a long body.

The lean cycle hands a whole body to ``VerlToolApp.observe_body`` and writes the answer in the
call that read the request; a refusal with ``Retry-After`` and an answer long enough to go out
in pieces (``ObservationChunks``, sent by a task) must still be the ASGI cycle's bytes.
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("httptools")

import agentenv  # noqa: E402, F401 - registers the ids
from agentenv.engine.actions import tool_call  # noqa: E402
from agentenv.integrations.serve_env import answer_body  # noqa: E402
from agentenv.integrations.serve_env.limits import EnvServerLimits  # noqa: E402
from agentenv.integrations.serve_env.runner import BackgroundServer  # noqa: E402
from agentenv.integrations.verl_tool import create_app  # noqa: E402

LIMITS = EnvServerLimits(max_live_envs=3, header_timeout_s=2.0)


def _plain(app: Any) -> Any:
    """``app`` without its routes showing: every request takes uvicorn's ASGI cycle."""

    async def plain(scope: dict, receive: Any, send: Any) -> None:
        await app(scope, receive, send)

    plain.state = app.state  # type: ignore[attr-defined]
    return plain


@pytest.fixture()
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[BackgroundServer, BackgroundServer]]:
    monkeypatch.setattr(answer_body, "CHUNK_BYTES", 64)  # every answer past 64 bytes in pieces
    with (
        BackgroundServer(create_app("MediaSearch-v0", split="test", limits=LIMITS), LIMITS) as a,
        BackgroundServer(
            _plain(create_app("MediaSearch-v0", split="test", limits=LIMITS)), LIMITS
        ) as b,
    ):
        yield a, b


def _ask(server: BackgroundServer, payload: dict) -> bytes:
    host, port = server.url.removeprefix("http://").split(":")
    body = json.dumps(payload).encode()
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(
            b"POST /get_observation HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s"
            % (len(body), body)
        )
        data = b""
        while True:
            end = data.find(b"\r\n\r\n")
            if end >= 0:
                length = int(re.search(rb"content-length: (\d+)", data[:end]).group(1))  # type: ignore[union-attr]
                if len(data) >= end + 4 + length:
                    return re.sub(rb"date: [^\r]*\r\n", b"", data[: end + 4 + length])
            chunk = sock.recv(1 << 16)
            assert chunk, data[:200]
            data += chunk


def test_long_answers_and_refusals_are_the_asgi_cycles_bytes(servers: Any) -> None:
    lean, plain = servers
    search = tool_call("search", query="heat")
    asks = [
        {  # a long answer: in pieces
            "trajectory_ids": ["a", "b"],
            "actions": [search, search],
            "extra_fields": [{"index": 0}, {"index": 1}],
        },
        {"trajectory_ids": ["c"], "actions": [search], "extra_fields": [{"index": 2}]},
        {  # past max_live_envs: 503 with Retry-After
            "trajectory_ids": ["d"],
            "actions": [search],
            "extra_fields": [{"index": 3}],
        },
        {"trajectory_ids": ["a", "b", "c"], "actions": [""] * 3, "finish": [True] * 3},
    ]
    statuses = []
    for payload in asks:
        got, expected = _ask(lean, payload), _ask(plain, payload)
        assert got == expected, payload
        statuses.append(got.split(b" ", 2)[1])
    assert statuses == [b"200", b"200", b"503", b"200"]
