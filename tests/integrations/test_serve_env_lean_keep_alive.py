"""A connection left idle after a lean answer is closed by the connection guard's idle deadline.

The lean cycle arms no uvicorn keep-alive timer (a timer armed and cancelled each request cost
~8 µs of CPU); the guard's ``idle_timeout_s`` closes the connection instead, and counts it. With
``idle_timeout_s`` 1.4 s, uvicorn's timer (``timeout_keep_alive``, 1 s: the limit rounded) would
have closed it first, uncounted.
"""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("httptools")

from agentenv.integrations.serve_env.limits import EnvServerLimits  # noqa: E402
from agentenv.integrations.serve_env.runner import BackgroundServer  # noqa: E402
from agentenv.integrations.verl_tool import create_app  # noqa: E402


class EchoEnv:
    """Steps to the action as its observation; never ends."""

    def reset(self, seed: int | None = None, options: Any = None) -> tuple[str, dict[str, Any]]:
        return "start", {}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        return action, 0.0, False, False, {}

    def close(self) -> None:
        pass


def test_an_idle_connection_after_a_lean_answer_is_closed_by_the_guard() -> None:
    limits = EnvServerLimits(idle_timeout_s=1.4, header_timeout_s=2.0)
    app = create_app(make=lambda split: EchoEnv(), split="test", limits=limits, info={})
    body = json.dumps(
        {"trajectory_ids": ["t"], "actions": ["hi"], "finish": [False], "is_last_step": [False]}
    ).encode()
    request = (
        b"POST /get_observation HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    with BackgroundServer(app, limits) as server:
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(request)
            answer = sock.recv(1 << 16)
            assert answer.startswith(b"HTTP/1.1 200 OK") and b'"obs": "hi"' in answer
            opened = time.monotonic()
            assert sock.recv(1 << 16) == b""  # closed by the server, idle
            waited = time.monotonic() - opened
        assert app.state.connections.stats.idle_timeouts == 1
        assert waited >= 1.3  # the guard's deadline, not a 1 s keep-alive timer


def _read_answers(sock: socket.socket, methods: list[str]) -> list[bytes]:
    """One whole HTTP answer per request method in ``methods``, read off ``sock`` in order
    (a HEAD's answer is its head alone, whatever its Content-Length says)."""
    buffer, answers = b"", []
    while len(answers) < len(methods):
        if b"\r\n\r\n" not in buffer:
            chunk = sock.recv(1 << 16)
            assert chunk, f"closed after {len(answers)} of {len(methods)} answers: {buffer[:200]!r}"
            buffer += chunk
            continue
        head, rest = buffer.split(b"\r\n\r\n", 1)
        length = 0
        if methods[len(answers)] != "HEAD":
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
        while len(rest) < length:
            chunk = sock.recv(1 << 16)
            assert chunk, "closed inside a body"
            rest += chunk
        answers.append(head + b"\r\n\r\n" + rest[:length])
        buffer = rest[length:]
    assert buffer == b"", f"bytes past the last answer: {buffer[:200]!r}"
    return answers


def test_a_head_request_on_a_kept_alive_connection_is_answered_and_keeps_the_stream_in_step() -> (
    None
):
    """A HEAD's answer has no body write, and its head used to wait for one forever: a kept-alive
    client got nothing, and a request pipelined behind it got the HEAD's answer."""
    limits = EnvServerLimits(idle_timeout_s=5.0, header_timeout_s=5.0)
    app = create_app(make=lambda split: EchoEnv(), split="test", limits=limits, info={})
    body = json.dumps({"trajectory_ids": ["t"], "actions": ["hi"]}).encode()
    post = (
        b"POST /get_observation HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    head = b"HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n"
    with BackgroundServer(app, limits) as server:
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            sock.sendall(head)
            (first,) = _read_answers(sock, ["HEAD"])
            sock.sendall(head + post + head)  # pipelined behind a HEAD
            second, third, fourth = _read_answers(sock, ["HEAD", "POST", "HEAD"])
            sock.sendall(post)  # the connection still carries requests
            (fifth,) = _read_answers(sock, ["POST"])
    assert first.startswith(b"HTTP/1.1 405") and b"content-length: 40" in first
    assert first.endswith(b"\r\n\r\n") and second == first.replace(
        first.split(b"\r\n")[1], second.split(b"\r\n")[1]
    )  # the same head (up to its date)
    assert fourth.startswith(b"HTTP/1.1 405")
    for answer in (third, fifth):
        assert answer.startswith(b"HTTP/1.1 200 OK") and b'"obs": "hi"' in answer
