"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for the llm agent's tests.

Each POST to ``/v1/chat/completions`` is recorded (``server.requests``) and
answered by a function of the request body, so a test can play a model
(tool calls, then an answer), a broken endpoint (HTTP 500, a hang, garbage,
a dropped connection) or vLLM's ``return_token_ids`` fields.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """What the fake server sends: a JSON body (or raw bytes) with a status, after a delay."""

    body: Any = None
    status: int = 200
    delay_s: float = 0.0
    drop: bool = False
    """Close the connection without any response."""


def chat_reply(
    content: str | None = None,
    tool_calls: Sequence[Mapping[str, Any]] = (),
    *,
    token_ids: Sequence[int] | None = None,
    prompt_token_ids: Sequence[int] | None = None,
    logprobs: Sequence[float] | None = None,
    reasoning: str | None = None,
) -> Reply:
    """A chat-completion reply shaped like vLLM's (``token_ids`` on the choice, ``prompt_token_ids`` on top)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function", "function": dict(call)} for i, call in enumerate(tool_calls)
        ]
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": "stop"}
    if token_ids is not None:
        choice["token_ids"] = list(token_ids)
    if logprobs is not None:
        choice["logprobs"] = {"content": [{"token": "", "logprob": lp, "top_logprobs": []} for lp in logprobs]}
    body: dict[str, Any] = {"id": "chatcmpl-fake", "object": "chat.completion", "model": "fake",
                            "choices": [choice], "usage": {}}
    if prompt_token_ids is not None:
        body["prompt_token_ids"] = list(prompt_token_ids)
    return Reply(body)


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """One native tool call (``function`` part) with JSON-encoded arguments."""
    return {"name": name, "arguments": json.dumps(arguments)}


class FakeOpenAI:
    """``with FakeOpenAI(respond) as server:`` serves ``respond(body) -> Reply`` on a free loopback port."""

    def __init__(self, respond: Callable[[dict[str, Any]], Reply]) -> None:
        self.respond = respond
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        """The server root, e.g. ``http://127.0.0.1:PORT`` (the agent appends ``/v1/chat/completions``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet tests
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = json.loads(raw)
                with fake._lock:
                    fake.requests.append(body)
                    fake.headers.append(dict(self.headers))
                if self.path != "/v1/chat/completions":
                    self._send(Reply({"error": f"no route {self.path}"}, status=404))
                    return
                self._send(fake.respond(body))

            def _send(self, reply: Reply) -> None:
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.drop:
                    self.close_connection = True
                    return
                data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
