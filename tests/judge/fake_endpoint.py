"""A deterministic fake OpenAI-compatible judge on loopback, for tests without a network or a model.

The reply depends on the ``model`` field of the request:

* ``stable``: yes iff the candidate and the reference are equal after
  normalisation (case, punctuation, articles, spaces), whatever the prompt;
* ``always-yes``: yes to everything (stable across prompts, and useless);
* ``flippy``: yes iff the word ``accept`` occurs in the prompt, so its verdict
  follows the wording, not the answer;
* ``flaky``: HTTP 503 for the first ``fail_first`` requests, then ``stable``;
* ``broken``: always HTTP 500; ``garbage``: replies "maybe";
* ``slow``: sleeps ``slow_s`` seconds, then ``stable``.

Requests are counted per model, so a test can prove that cached verdicts make
no request.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_BLOCK = re.compile(r"<(reference|candidate)>\n(.*?)\n</\1>", re.DOTALL)


def normalise(text: str) -> str:
    words = re.sub(r"[^\w\s]", " ", text.lower()).split()
    return " ".join(w for w in words if w not in {"a", "an", "the"})


def judge_reply(model: str, messages: list[dict[str, Any]]) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    if model == "flippy":
        return "yes" if "accept" in prompt.lower() else "no"
    if model == "garbage":
        return "maybe"
    if model == "always-yes":
        return "Yes."
    blocks = dict(_BLOCK.findall(messages[-1]["content"]))
    return "Yes." if normalise(blocks["candidate"]) == normalise(blocks["reference"]) else "No."


class FakeJudge:
    """Serves ``POST /v1/chat/completions`` on 127.0.0.1 at a free port; a context manager."""

    def __init__(self, *, fail_first: int = 2, slow_s: float = 0.5) -> None:
        self.requests: Counter[str] = Counter()
        self.fail_first, self.slow_s = fail_first, slow_s
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                if self.path != "/v1/chat/completions":
                    return self._send(404, {"error": f"no route {self.path}"})
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                model = body["model"]
                with fake._lock:
                    fake.requests[model] += 1
                    count = fake.requests[model]
                if model == "broken" or (model == "flaky" and count <= fake.fail_first):
                    return self._send(
                        500 if model == "broken" else 503, {"error": "judge overloaded"}
                    )
                if model == "slow":
                    time.sleep(fake.slow_s)
                reply = judge_reply(model, body["messages"])
                self._send(
                    200,
                    {
                        "object": "chat.completion",
                        "model": model,
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": reply},
                                "finish_reason": "stop",
                            }
                        ],
                    },
                )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out first
                    pass

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self) -> FakeJudge:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join()
