"""The ``llm`` agent: a chat model behind any OpenAI-compatible endpoint (vLLM, ``transformers serve``, ...).

Each turn it POSTs the env's conversation to ``{base_url}/chat/completions``:
``info["messages"]`` as they are (system, user, assistant with ``tool_calls``,
tool) and, with ``tool_format="native"``, ``info["tools"]`` as the function
schemas. The reply becomes the action text the env parses:

* ``native``: the response's ``tool_calls`` are rendered with
  :func:`agentenv.actions.tool_call` into canonical ``<tool_call>`` blocks; a
  reply without tool calls passes its ``content`` through (``<answer>…</answer>``
  or whatever the model wrote, which the env then explains). Arguments that are
  not valid JSON are passed on verbatim, so the env reports the error: a
  repaired call would train nothing.
* ``hermes``: the raw ``content`` text is the action (the model writes
  ``<tool_call>`` blocks itself; ``tools`` is not sent and the server needs no
  tool parser). The model then sees no schemas, so make the env describe its
  tools in the system prompt: ``gym.make(ID, tools_in_prompt=True)``, or
  ``agentenv eval ID --agent llm --agent-args tool_format=hermes --env-arg tools_in_prompt=true``.

A server-side reasoning parser's ``reasoning_content`` comes back as a
``<think>`` block in front of the action, so transcripts keep it.

Failures are bounded: each request has a deadline of ``timeout_s`` (connect,
send and the whole body), a failed request is retried at most ``retries``
times with capped exponential backoff (connection errors, timeouts, HTTP 408,
409, 425, 429 and 5xx, unreadable replies), and other 4xx are not retried.
After that ``act`` raises :class:`~agentenv.evaluation.agents.AgentFailure`;
the evaluation runner records the reason and the env scores the episode as
unanswered. Nothing here crashes an evaluation.

Token ids (``return_token_ids=true``): vLLM (≥ 0.10.2) then returns the ids it
sampled in ``choices[0].token_ids`` and the prompt it rendered in
``prompt_token_ids``. They are exposed as :attr:`LLMAgent.last_token_ids` (and
``last_logprobs``, ``last_prompt_ids``), and :func:`llm_token_rollout` feeds
them into :class:`agentenv.tokens.TokenEnv` as they are: no retokenization.

Requests go out with the stdlib ``http.client`` (no proxy settings are read,
which keeps loopback servers reachable). The API key comes from
``api_key``, else ``$AGENTENV_LLM_API_KEY``, else ``$OPENAI_API_KEY``;
prefer the environment variables, since ``--agent-args`` are written into
``summary.json``.

Example:
    >>> chat_completions_url("http://127.0.0.1:8000"), chat_completions_url("https://host/v1/")
    ('http://127.0.0.1:8000/v1/chat/completions', 'https://host/v1/chat/completions')
    >>> print(action_from_message({"content": None, "tool_calls": [
    ...     {"type": "function", "function": {"name": "search", "arguments": '{"query": "Heat"}'}}]}, "native"))
    <tool_call>
    {"name": "search", "arguments": {"query": "Heat"}}
    </tool_call>
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

import numpy as np

from agentenv.actions import think, tool_call
from agentenv.arguments import args_from_strings
from agentenv.core import Task
from agentenv.evaluation.agents import AgentFailure

if TYPE_CHECKING:  # pragma: no cover - typing only
    import gymnasium as gym

    from agentenv.tokens import ChatTemplate

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({408, 409, 425, 429}) | frozenset(range(500, 600))
"""HTTP statuses worth another try; any other error status is the caller's mistake."""
MAX_BACKOFF_S = 8.0
"""Upper bound of one wait between retries."""
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
"""A reply larger than this is refused (a misbehaving server must not exhaust memory)."""


@dataclass
class LLMAgentArgs:
    """Knobs of the llm agent (``--agent-args base_url=http://127.0.0.1:8000 model=Qwen/Qwen3-8B``)."""

    base_url: str = "http://127.0.0.1:8000/v1"
    """Server root or its ``/v1``; requests go to ``.../v1/chat/completions``."""
    model: str = ""
    """Model name the server expects (required)."""
    api_key: str | None = None
    """Bearer token; ``None`` reads ``$AGENTENV_LLM_API_KEY``, then ``$OPENAI_API_KEY`` (may stay unset)."""
    temperature: float = 0.0
    """Sampling temperature; 0 is greedy, the usual choice for evaluation."""
    max_tokens: int = 1024
    """Most tokens sampled per turn."""
    timeout_s: float = 60.0
    """Deadline of one request, connect to last byte."""
    retries: int = 2
    """Extra attempts after a failed request (so at most ``retries + 1`` requests per turn)."""
    backoff_s: float = 0.5
    """First wait between attempts; doubles each retry, capped at ``MAX_BACKOFF_S``."""
    tool_format: Literal["native", "hermes"] = "native"
    """``native``: send ``tools`` and render the reply's ``tool_calls``; ``hermes``: the reply text is the action."""
    return_token_ids: bool = False
    """Ask vLLM for the sampled and prompt token ids (and logprobs), for :func:`llm_token_rollout`."""
    send_seed: bool = True
    """Send a per-turn sampling seed drawn from the episode's generator, so sampled runs repeat."""

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("the llm agent needs model=NAME (the model the server serves)")
        if urlsplit(self.base_url).scheme not in ("http", "https"):
            raise ValueError(f"base_url must start with http:// or https://, got {self.base_url!r}")
        if self.tool_format not in ("native", "hermes"):
            raise ValueError(f"tool_format must be 'native' or 'hermes', got {self.tool_format!r}")
        if self.timeout_s <= 0 or self.retries < 0 or self.backoff_s < 0 or self.max_tokens < 1:
            raise ValueError("timeout_s and max_tokens must be positive; retries and backoff_s must be >= 0")


def chat_completions_url(base_url: str) -> str:
    """The chat-completions endpoint of a server root or a ``/v1`` base URL."""
    root = base_url.rstrip("/")
    return f"{root}/chat/completions" if root.endswith("/v1") else f"{root}/v1/chat/completions"


def action_from_message(message: Mapping[str, Any], tool_format: Literal["native", "hermes"]) -> str:
    """The action text of one assistant reply (see the module docstring)."""
    content = message.get("content") or ""
    if isinstance(content, list):  # content parts: keep the text ones
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    content = str(content)
    calls = message.get("tool_calls") or []
    if calls and (tool_format == "native" or not content.strip()):
        # Hermes text normally carries its own calls; a server that parsed them anyway still gets them rendered.
        action = "\n".join(([content.strip()] if content.strip() else []) + [_render_call(c) for c in calls])
    else:
        action = content
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    return think(str(reasoning).strip(), action) if reasoning and "<think>" not in action else action


def _render_call(call: Mapping[str, Any]) -> str:
    function = call.get("function") or {}
    name = str(function.get("name", ""))
    raw = function.get("arguments", "{}")
    args = raw if isinstance(raw, Mapping) else _loads_object(raw)
    if args is None:  # not a JSON object: hand it to the env's parser as it came, unrepaired
        text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
        return f'<tool_call>\n{{"name": {json.dumps(name, ensure_ascii=False)}, "arguments": {text}}}\n</tool_call>'
    return tool_call(name, **args)


def _loads_object(raw: Any) -> dict[str, Any] | None:
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def make_llm_agent(**kwargs: Any) -> LLMAgent:
    """The ``llm`` entry of the agent registry: ``--agent-args`` strings -> :class:`LLMAgentArgs`."""
    return LLMAgent(args_from_strings(LLMAgentArgs, kwargs))


class _Retryable(Exception):
    """A failed attempt that another attempt may fix."""


class LLMAgent:
    """A chat-completions client that acts in any agentenv env; see the module docstring."""

    name = "llm"

    def __init__(self, args: LLMAgentArgs) -> None:
        self.args = args
        self.url = chat_completions_url(args.base_url)
        self._api_key = args.api_key or os.environ.get("AGENTENV_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY")
        self._seed = 0
        self._turn = 0
        self.requests = 0
        """Requests sent so far (all attempts), for reports and tests."""
        self.last_token_ids: list[int] | None = None
        """Ids the server sampled for the last action (``return_token_ids`` only)."""
        self.last_logprobs: list[float] | None = None
        """Their logprobs, when the server sent one per id."""
        self.last_prompt_ids: list[int] | None = None
        """The prompt ids the server rendered for the last request."""
        self.last_message: dict[str, Any] | None = None
        """The last assistant message as the server sent it."""

    def reset(self, obs: str, info: Mapping[str, Any], *, task: Task | None = None,
              rng: np.random.Generator | None = None) -> None:
        self._seed = int(rng.integers(2**31 - 1)) if rng is not None else 0
        self._turn = 0

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        self._turn += 1
        body = self._request_body(info)
        message, choice, reply = self._complete(body)
        self.last_message = dict(message)
        self.last_token_ids = _ints(choice.get("token_ids"))
        self.last_prompt_ids = _ints(reply.get("prompt_token_ids"))
        self.last_logprobs = _logprobs(choice, self.last_token_ids)
        if self.args.return_token_ids and self.last_token_ids is None:
            log.warning("%s returned no token_ids; is it vLLM >= 0.10.2?", self.url)
        return action_from_message(message, self.args.tool_format)

    # ------------------------------------------------------------------ the request

    def _request_body(self, info: Mapping[str, Any]) -> dict[str, Any]:
        args = self.args
        body: dict[str, Any] = {
            "model": args.model,
            "messages": list(info["messages"]),
            "temperature": args.temperature,
            "max_tokens": args.max_tokens,
        }
        if args.send_seed:
            body["seed"] = (self._seed + self._turn) % (2**31 - 1)
        if args.tool_format == "native" and info.get("tools"):
            body["tools"] = list(info["tools"])
        if args.return_token_ids:
            body["return_token_ids"] = True
            body["logprobs"] = True
        return body

    def _complete(self, body: Mapping[str, Any]) -> tuple[Mapping[str, Any], Mapping[str, Any], Mapping[str, Any]]:
        """(message, choice, whole reply) of one chat completion, after at most ``retries + 1`` attempts."""
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        errors: list[str] = []
        for attempt in range(self.args.retries + 1):
            if attempt:
                time.sleep(min(self.args.backoff_s * 2 ** (attempt - 1), MAX_BACKOFF_S))
            self.requests += 1
            try:
                reply = self._post(payload)
                choice = reply["choices"][0]
                message = choice["message"]
                if not isinstance(message, Mapping):
                    raise TypeError("message is not an object")
                return message, choice, reply
            except _Retryable as exc:
                errors.append(str(exc))
            except (KeyError, IndexError, TypeError) as exc:
                errors.append(f"reply without choices[0].message ({type(exc).__name__}: {exc})")
            log.warning("%s: attempt %d of %d failed: %s", self.url, attempt + 1, self.args.retries + 1, errors[-1])
        raise AgentFailure(f"{self.url}: {len(errors)} attempt(s) failed; last: {errors[-1]}")

    def _post(self, payload: bytes) -> Any:
        """One POST with a deadline over the whole exchange; raises _Retryable or AgentFailure."""
        parts = urlsplit(self.url)
        deadline = time.monotonic() + self.args.timeout_s
        connection_type = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        conn = connection_type(parts.hostname or "127.0.0.1", parts.port, timeout=self.args.timeout_s)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        try:
            conn.request("POST", path, body=payload, headers=headers)
            _tighten(conn, deadline)
            response = conn.getresponse()
            data = _read_body(conn, response, deadline)
        except TimeoutError:
            raise _Retryable(f"no complete reply within {self.args.timeout_s:g} s") from None
        except (OSError, http.client.HTTPException) as exc:
            raise _Retryable(f"connection failed ({type(exc).__name__}: {exc})") from None
        finally:
            conn.close()
        if response.status != 200:
            excerpt = data[:300].decode("utf-8", errors="replace")
            if response.status in RETRY_STATUSES:
                raise _Retryable(f"HTTP {response.status}: {excerpt}")
            raise AgentFailure(f"{self.url}: HTTP {response.status} (not retried): {excerpt}")
        try:
            return json.loads(data)
        except ValueError:
            raise _Retryable(f"the reply is not JSON: {data[:120]!r}") from None


def _tighten(conn: http.client.HTTPConnection, deadline: float) -> None:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError
    if conn.sock is not None:
        conn.sock.settimeout(remaining)


def _read_body(conn: http.client.HTTPConnection, response: http.client.HTTPResponse, deadline: float) -> bytes:
    """Read the body in chunks, each under what is left of the deadline (a trickling server times out too)."""
    chunks, size = [], 0
    while True:
        _tighten(conn, deadline)
        chunk = response.read1(65536) if hasattr(response, "read1") else response.read(65536)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            raise http.client.HTTPException(f"reply larger than {MAX_RESPONSE_BYTES} bytes")
        chunks.append(chunk)


def _ints(value: Any) -> list[int] | None:
    if not isinstance(value, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in value):
        return None
    return list(value)


def _logprobs(choice: Mapping[str, Any], ids: Sequence[int] | None) -> list[float] | None:
    """One logprob per sampled id from ``choices[0].logprobs.content``, or None when they do not line up."""
    content = (choice.get("logprobs") or {}).get("content") if isinstance(choice.get("logprobs"), Mapping) else None
    if ids is None or not isinstance(content, list) or len(content) != len(ids):
        return None
    try:
        return [float(entry["logprob"]) for entry in content]
    except (KeyError, TypeError, ValueError):
        return None


# ---------------------------------------------------------------------- token-in-token-out


@dataclass
class TokenRollout:
    """One episode played through :class:`~agentenv.tokens.TokenEnv` with the server's sampled ids."""

    input_ids: list[int]
    """Prompt, sampled and env ids, interleaved, exactly as the episode ran."""
    loss_mask: list[int]
    """1 on sampled ids, 0 on env ids."""
    logprobs: list[float | None]
    """The server's logprob of each sampled id (None where it sent none), 0.0 on env ids."""
    rewards: list[float]
    """Reward of each step."""
    terminated: bool
    truncated: bool
    prompt_mismatch_turns: list[int] = field(default_factory=list)
    """Turns (1-based) where the server's own rendering of the chat (``prompt_token_ids``) differed
    from the trajectory so far: the model was conditioned on ids other than the ones trained on.
    Empty when the server sends no prompt ids."""
    info: dict[str, Any] = field(default_factory=dict)
    """The last step's info (``messages``, ``reward_components``, ...)."""


def llm_token_rollout(
    env: gym.Env[str, str],
    template: ChatTemplate,
    agent: LLMAgent,
    *,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    rng: np.random.Generator | None = None,
) -> TokenRollout:
    """Play one episode where the actions are the ids the server sampled, fed to ``TokenEnv`` as they are.

    ``agent`` must have ``return_token_ids=True`` against a server that honours
    it (vLLM ≥ 0.10.2). Each turn the agent sends the chat so far; the
    sampled ids (and logprobs) go into :class:`agentenv.tokens.TokenEnv`,
    which keeps them verbatim in ``input_ids`` and decodes them only to drive
    the text env. The text the agent would have rendered is not used: the ids
    are the action. ``template`` must be the served model's chat template.

    The chat-completions API renders the prompt itself, so a server could
    condition on ids that differ from the trajectory (its template re-renders
    earlier turns); such turns are listed in ``prompt_mismatch_turns``.

    Raises:
        ValueError: the server sent no ``token_ids``.
        AgentFailure: the endpoint failed (after the agent's retries).
    """
    from agentenv.tokens import TokenEnv

    token_env = TokenEnv(env, template)
    _, info = token_env.reset(seed=seed, options=options)
    agent.reset("", info, rng=rng if rng is not None else np.random.default_rng(seed))
    rewards: list[float] = []
    mismatches: list[int] = []
    terminated = truncated = False
    turn = 0
    while not (terminated or truncated):
        turn += 1
        running = list(info["input_ids"])
        agent.act("", info)
        ids = agent.last_token_ids
        if ids is None:
            raise ValueError(
                f"{agent.url} sent no choices[0].token_ids: serve with vLLM >= 0.10.2 and set return_token_ids=true"
            )
        if agent.last_prompt_ids is not None and agent.last_prompt_ids != running:
            mismatches.append(turn)
        action: Any = {"token_ids": ids, "logprobs": agent.last_logprobs} if agent.last_logprobs else ids
        _, reward, terminated, truncated, info = token_env.step(action)
        rewards.append(float(reward))
    return TokenRollout(
        input_ids=list(info["input_ids"]),
        loss_mask=list(info["loss_mask"]),
        logprobs=list(info["logprobs"]),
        rewards=rewards,
        terminated=bool(terminated),
        truncated=bool(truncated),
        prompt_mismatch_turns=mismatches,
        info=info,
    )
