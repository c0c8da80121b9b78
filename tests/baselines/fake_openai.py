"""A scripted OpenAI-compatible server on 127.0.0.1, for the llm agent's tests.

Each POST to ``/v1/chat/completions`` (and, when a ``complete`` function is
given, ``/v1/completions``) is recorded (``server.requests``, with the path in
``server.paths``) and answered by a function of the request body, so a test
can play a model (tool calls, then an answer), a broken endpoint (HTTP 500, a
hang, garbage, a dropped connection, a 400 to ``tools``) or vLLM's
``return_token_ids`` fields. :class:`VLLMLike` is a scripted model behind
both endpoints that renders chat requests the way vLLM does (its message
normalisation, then the official Qwen3 chat template), for the
token-exactness tests.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
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
            {"id": f"call_{i}", "type": "function", "function": dict(call)}
            for i, call in enumerate(tool_calls)
        ]
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": "stop"}
    if token_ids is not None:
        choice["token_ids"] = list(token_ids)
    if logprobs is not None:
        choice["logprobs"] = {
            "content": [{"token": "", "logprob": lp, "top_logprobs": []} for lp in logprobs]
        }
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": "fake",
        "choices": [choice],
        "usage": {},
    }
    if prompt_token_ids is not None:
        body["prompt_token_ids"] = list(prompt_token_ids)
    return Reply(body)


def completion_reply(
    token_ids: Sequence[int],
    *,
    text: str = "",
    prompt_token_ids: Sequence[int] | None = None,
    logprobs: Sequence[float] | None = None,
    finish_reason: str = "stop",
) -> Reply:
    """A ``/v1/completions`` reply shaped like vLLM's with ``return_token_ids`` (ids on the choice)."""
    choice: dict[str, Any] = {
        "index": 0,
        "text": text,
        "finish_reason": finish_reason,
        "token_ids": list(token_ids),
    }
    if prompt_token_ids is not None:
        choice["prompt_token_ids"] = list(prompt_token_ids)
    if logprobs is not None:
        choice["logprobs"] = {
            "text_offset": [0] * len(logprobs),
            "token_logprobs": list(logprobs),
            "tokens": [""] * len(logprobs),
            "top_logprobs": [{} for _ in logprobs],
        }
    return Reply(
        {
            "id": "cmpl-fake",
            "object": "text_completion",
            "model": "fake",
            "choices": [choice],
            "usage": {},
        }
    )


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """One native tool call (``function`` part) with JSON-encoded arguments."""
    return {"name": name, "arguments": json.dumps(arguments)}


class FakeOpenAI:
    """``with FakeOpenAI(respond) as server:`` serves ``respond(body) -> Reply`` on a free loopback port.

    ``respond`` answers ``/v1/chat/completions``; ``complete`` (optional) answers ``/v1/completions``.
    """

    def __init__(
        self,
        respond: Callable[[dict[str, Any]], Reply],
        complete: Callable[[dict[str, Any]], Reply] | None = None,
        models: Sequence[str] | Reply = (),
    ) -> None:
        self.respond = respond
        self.complete = complete
        self.models = models
        """``GET /v1/models`` lists these ids (none: a server that lists nothing), or sends this reply."""
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )

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

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                if self.path != "/v1/models":
                    self._send(Reply({"error": f"no route {self.path}"}, status=404))
                elif isinstance(fake.models, Reply):
                    self._send(fake.models)
                else:
                    self._send(
                        Reply(
                            {
                                "object": "list",
                                "data": [{"id": m, "object": "model"} for m in fake.models],
                            }
                        )
                    )

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = json.loads(raw)
                with fake._lock:
                    fake.requests.append(body)
                    fake.paths.append(self.path)
                    fake.headers.append(dict(self.headers))
                if self.path == "/v1/chat/completions":
                    self._send(fake.respond(body))
                elif self.path == "/v1/completions" and fake.complete is not None:
                    self._send(fake.complete(body))
                else:
                    self._send(Reply({"error": f"no route {self.path}"}, status=404))

            def _send(self, reply: Reply) -> None:
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.drop:
                    self.close_connection = True
                    return
                data = (
                    reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                )
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


# ---------------------------------------------------------------------------- vLLM's chat rendering

VLLM_TOOLS_OFF = (
    '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
)
"""vLLM's HTTP 400 message for a request with ``tools`` when tool calling was not enabled at startup."""


def official_qwen3_template() -> str | None:
    """The official Qwen3 chat template, as TRL ships a copy of it (``trl/chat_templates/qwen3.jinja``).

    Read from the installed ``trl`` without importing it; None when TRL is not installed.
    """
    spec = importlib.util.find_spec("trl")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "chat_templates" / "qwen3.jinja"
    return path.read_text(encoding="utf-8") if path.is_file() else None


def vllm_conversation(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """What vLLM's chat endpoint hands the template (``parse_chat_messages``, "string" content format).

    Content becomes a string (None -> "", text parts joined by newlines); an assistant message keeps
    its ``tool_calls`` and its ``reasoning`` (copied to ``reasoning_content`` too) — current vLLM reads
    only ``reasoning`` on incoming messages; a tool message keeps ``tool_call_id``; ``name`` is kept.
    Then ``_postprocess_messages``: tool-call ``arguments`` strings are parsed to objects (``{}`` when
    not JSON), so the template re-serialises them, and empty ``tool_calls`` are dropped.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        content = message.get("content")
        if content is None:
            text = ""
        elif isinstance(content, str):
            text = content
        else:
            text = "\n".join(
                str(p.get("text", ""))
                for p in content
                if isinstance(p, Mapping) and p.get("type") == "text"
            )
        m: dict[str, Any] = {"role": role, "content": text}
        if role == "assistant":
            if message.get("tool_calls") is not None:
                m["tool_calls"] = copy.deepcopy(list(message["tool_calls"]))
            reasoning = message.get("reasoning")
            if reasoning is not None:
                m["reasoning"] = m["reasoning_content"] = reasoning
        elif role == "tool" and "tool_call_id" in message:
            m["tool_call_id"] = message["tool_call_id"]
        if isinstance(message.get("name"), str):
            m["name"] = message["name"]
        out.append(m)
    for m in out:
        calls = m.get("tool_calls")
        if m["role"] != "assistant" or not isinstance(calls, list):
            continue
        if not calls:
            m.pop("tool_calls")
            continue
        for item in calls:
            arguments = item["function"].get("arguments")
            if isinstance(arguments, str):
                try:
                    item["function"]["arguments"] = json.loads(arguments)
                except json.JSONDecodeError:
                    item["function"]["arguments"] = {}
            elif not isinstance(arguments, (dict, list)):
                item["function"]["arguments"] = {}
    return out


def vllm_tools(tools: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]] | None:
    """The request's tools as vLLM dumps its pydantic models (type, then name, description, parameters)."""
    if not tools:
        return None
    return [
        {
            "type": t.get("type", "function"),
            "function": {k: t["function"].get(k) for k in ("name", "description", "parameters")},
        }
        for t in tools
    ]


class VLLMLike:
    """A scripted model behind both of vLLM's endpoints, recording what it was conditioned on.

    ``queue`` holds the ids it will "sample" next, one list per request; when it is empty it
    samples ``fallback``. ``conditioned`` records ``(path, prompt ids)`` for every request:
    for ``/v1/completions`` the prompt ids as received, for ``/v1/chat/completions`` the
    rendering of the request as vLLM makes it (:func:`vllm_conversation`, :func:`vllm_tools`,
    the official template with ``chat_template_kwargs``, then encoding without special tokens).
    ``tool_calling=False`` plays a server started without ``--enable-auto-tool-choice``.
    """

    def __init__(
        self,
        tokenizer: Any,
        chat_template: str,
        *,
        fallback: Sequence[int],
        tool_calling: bool = True,
    ) -> None:
        self.tokenizer = tokenizer
        self.chat_template = chat_template
        self.fallback = list(fallback)
        self.tool_calling = tool_calling
        self.queue: deque[list[int]] = deque()
        self.conditioned: list[tuple[str, list[int]]] = []
        self._lock = threading.Lock()

    def render_chat(self, body: Mapping[str, Any]) -> list[int]:
        text = self.tokenizer.apply_chat_template(
            vllm_conversation(body["messages"]),
            tools=vllm_tools(body.get("tools")),
            chat_template=self.chat_template,
            add_generation_prompt=True,
            tokenize=False,
            **dict(body.get("chat_template_kwargs") or {}),
        )
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def _sample(self, path: str, prompt: list[int]) -> list[int]:
        with self._lock:
            self.conditioned.append((path, prompt))
            return self.queue.popleft() if self.queue else list(self.fallback)

    def chat(self, body: dict[str, Any]) -> Reply:
        if body.get("tools") and not self.tool_calling:
            return Reply(
                {
                    "object": "error",
                    "message": VLLM_TOOLS_OFF,
                    "type": "BadRequestError",
                    "param": None,
                    "code": 400,
                },
                status=400,
            )
        prompt = self.render_chat(body)
        ids = self._sample("/v1/chat/completions", prompt)
        text = self.tokenizer.decode(ids, skip_special_tokens=True)
        return chat_reply(text, token_ids=ids, prompt_token_ids=prompt, logprobs=[-0.5] * len(ids))

    def complete(self, body: dict[str, Any]) -> Reply:
        prompt = body["prompt"]
        if not (isinstance(prompt, list) and all(isinstance(i, int) for i in prompt)):
            return Reply(
                {
                    "object": "error",
                    "message": "this fake takes token-id prompts only",
                    "code": 400,
                },
                status=400,
            )
        ids = self._sample("/v1/completions", list(prompt))
        text = self.tokenizer.decode(ids, skip_special_tokens=True)
        return completion_reply(
            ids, text=text, prompt_token_ids=prompt, logprobs=[-0.25] * len(ids)
        )
