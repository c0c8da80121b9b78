"""Reading HTTP answers off a raw socket, for tests that send bytes no client library would, and
an app served through uvicorn's own cycle to compare the lean one with."""

from __future__ import annotations

import re
import socket
from typing import Any


def plain_cycle(app: Any) -> Any:
    """``app`` without its routes showing: every request takes uvicorn's ASGI cycle."""

    async def plain(scope: dict, receive: Any, send: Any) -> None:
        await app(scope, receive, send)

    plain.state = app.state  # type: ignore[attr-defined]
    return plain


def read_answers(sock: socket.socket, count: int) -> list[bytes]:
    """``count`` whole HTTP answers (content-length framed), in order."""
    data, answers = b"", []
    while len(answers) < count:
        end = data.find(b"\r\n\r\n")
        if end >= 0:
            length = int(re.search(rb"content-length: (\d+)", data[:end]).group(1))  # type: ignore[union-attr]
            if len(data) >= end + 4 + length:
                answers.append(data[: end + 4 + length])
                data = data[end + 4 + length :]
                continue
        chunk = sock.recv(1 << 16)
        if not chunk:
            raise AssertionError(
                f"connection closed after {len(answers)} answers; got {data[:200]!r}"
            )
        data += chunk
    return answers


def undated(answer: bytes) -> bytes:
    """``answer`` without its ``date`` header, which differs between two answers a second apart."""
    return re.sub(rb"date: [^\r]*\r\n", b"", answer)
