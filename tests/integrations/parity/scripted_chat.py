"""A scripted OpenAI-compatible chat endpoint on 127.0.0.1 that streams, for clients that ask for ``stream: true``.

verifiers' eval client relays the model's stream from its harness program to the endpoint, so the
stand-in for a model must speak server-sent events; ``tests/baselines/fake_openai.py`` answers with
whole JSON bodies only. Each request is recorded and answered with the next scripted reply text.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedChat:
    """``with ScriptedChat(replies) as server:`` serves ``replies`` in order at ``server.url`` (``.../v1``)."""

    def __init__(self, replies: Sequence[str]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ScriptedChat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self, body: dict[str, Any]) -> str:
        with self._lock:
            self.requests.append(body)
            n = len(self.requests)
        if n > len(self.replies):
            raise RuntimeError(f"request {n} but only {len(self.replies)} scripted replies")
        return self.replies[n - 1]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        chat = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet tests
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                text = chat._next(body)
                base = {
                    "id": "chatcmpl-scripted",
                    "model": body.get("model", "scripted"),
                    "created": 0,
                }
                usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
                if body.get("stream"):
                    chunks = [
                        {
                            **base,
                            "object": "chat.completion.chunk",
                            "choices": [
                                {
                                    "index": 0,
                                    "delta": {"role": "assistant", "content": text},
                                    "finish_reason": None,
                                }
                            ],
                        },
                        {
                            **base,
                            "object": "chat.completion.chunk",
                            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                            "usage": usage,
                        },
                    ]
                    data = (
                        "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
                    )
                    content_type = "text/event-stream"
                else:
                    data = json.dumps(
                        {
                            **base,
                            "object": "chat.completion",
                            "usage": usage,
                            "choices": [
                                {
                                    "index": 0,
                                    "message": {"role": "assistant", "content": text},
                                    "finish_reason": "stop",
                                }
                            ],
                        }
                    )
                    content_type = "application/json"
                raw = data.encode()
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        return Handler
