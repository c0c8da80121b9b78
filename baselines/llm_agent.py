"""The ``llm`` agent: a chat model behind any OpenAI-compatible endpoint (vLLM, ``transformers serve``, ...).

Two paths, for two jobs:

* **Text evaluation** (``agentenv eval ... --agent llm``): each turn POSTs the
  env's conversation to ``{base_url}/chat/completions``, ``info["messages"]``
  as they are (system, user, assistant with ``tool_calls``, tool) and, with
  ``tool_format="native"``, ``info["tools"]`` as the function schemas. The
  server renders the prompt with its chat template; the reply becomes the
  action text the env parses.
* **Token-exact rollouts** (:func:`~agentenv.baselines.llm_tokens.llm_token_rollout`):
  the prompt is the :class:`~agentenv.tokens.TokenEnv` trajectory's own ids,
  sent to ``{base_url}/completions`` (:meth:`LLMAgent.complete_ids`), so the
  server conditions on exactly the ids that are trained on. The chat endpoint
  cannot promise that: it re-renders the history (see
  ``docs/token-in-token-out.md``, "The serving side").

Reply to action (chat path):

* ``native``: the response's ``tool_calls`` are rendered with
  :func:`agentenv.engine.actions.tool_call` into canonical ``<tool_call>`` blocks; a
  reply without tool calls passes its ``content`` through (``<answer>…</answer>``
  or whatever the model wrote, which the env then explains). Arguments that are
  not valid JSON are passed on verbatim, so the env reports the error: a
  repaired call would train nothing. vLLM needs ``--enable-auto-tool-choice
  --tool-call-parser hermes`` for this (Qwen3); without them it answers HTTP 400
  to every request with ``tools``, which becomes one :class:`ToolCallingDisabled`
  error that names the flags.
* ``hermes``: the raw ``content`` text is the action (the model writes
  ``<tool_call>`` blocks itself; ``tools`` is not sent and the server needs no
  tool parser). The model then sees no schemas, so make the env describe its
  tools in the system prompt: ``gym.make(ID, tools_in_prompt=True)``, or
  ``agentenv eval ID --agent llm --agent-args tool_format=hermes --env-arg tools_in_prompt=true``.

A server-side reasoning parser's reasoning (``reasoning`` or the older
``reasoning_content``) comes back as a ``<think>`` block in front of the
action, so transcripts keep it. Assistant messages sent back carry their
reasoning under both names: vLLM's chat endpoint reads only ``reasoning`` on
incoming messages in current releases, older ones only ``reasoning_content``.
``enable_thinking=false`` sends ``chat_template_kwargs`` so Qwen3's template
renders its no-think header.

Failures are bounded: each request has a deadline of ``timeout_s`` (connect,
send and the whole body), a failed request is retried at most ``retries``
times with capped exponential backoff (connection errors, timeouts, HTTP 408,
409, 425, 429 and 5xx, unreadable replies), and other 4xx are not retried.
After that a call raises :class:`~agentenv.evaluation.agents.AgentFailure`;
the evaluation runner records the reason and the env scores the episode as
unanswered, and ``summary.json`` counts such episodes (``agent_failures``).

The API key comes from ``api_key``, else ``$AGENTENV_LLM_API_KEY``, else
``$OPENAI_API_KEY``; prefer the environment variables, since ``--agent-args``
are written into ``summary.json`` (``api_key`` is redacted there).

Example:
    >>> chat_completions_url("http://127.0.0.1:8000"), completions_url("https://host/v1/")
    ('http://127.0.0.1:8000/v1/chat/completions', 'https://host/v1/completions')
    >>> print(action_from_message({"content": None, "tool_calls": [
    ...     {"type": "function", "function": {"name": "search", "arguments": '{"query": "Heat"}'}}]}, "native"))
    <tool_call>
    {"name": "search", "arguments": {"query": "Heat"}}
    </tool_call>
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

import numpy as np

from agentenv.baselines.llm_http import (
    MAX_BACKOFF_S,
    MAX_RESPONSE_BYTES,
    RETRY_STATUSES,
    HTTPError,
    Retryable,
    endpoint_url,
    post_json,
    with_retries,
)
from agentenv.core import Task
from agentenv.engine.actions import action_from_message
from agentenv.evaluation.agents import AgentFailure
from agentenv.evaluation.arguments import args_from_strings
from agentenv.evaluation.recorded_args import without_credentials

__all__ = [
    "MAX_BACKOFF_S",
    "MAX_RESPONSE_BYTES",
    "RETRY_STATUSES",
    "VLLM_TOOL_FLAGS",
    "CompletionIds",
    "LLMAgent",
    "LLMAgentArgs",
    "ToolCallingDisabled",
    "TokenRollout",
    "action_from_message",
    "chat_completions_url",
    "completions_url",
    "llm_token_rollout",
    "make_llm_agent",
]

log = logging.getLogger(__name__)

VLLM_TOOL_FLAGS = "--enable-auto-tool-choice --tool-call-parser hermes"
"""What ``vllm serve`` needs for ``tool_format=native`` with Qwen3 (the parser name depends on the model)."""


class ToolCallingDisabled(AgentFailure):
    """The server refused a request with ``tools``: its tool calling is off (vLLM: HTTP 400)."""


@dataclass
class LLMAgentArgs:
    """Knobs of the llm agent (``--agent-args base_url=http://127.0.0.1:8000 model=Qwen/Qwen3-8B``)."""

    base_url: str = "http://127.0.0.1:8000/v1"
    """Server root or its ``/v1``; requests go to ``.../v1/chat/completions`` (or ``.../v1/completions``)."""
    model: str = ""
    """Model name the server expects (required)."""
    api_key: str | None = None
    """Bearer token; ``None`` reads ``$AGENTENV_LLM_API_KEY``, then ``$OPENAI_API_KEY`` (may stay unset)."""
    temperature: float = 0.0
    """Sampling temperature; 0 is greedy, the usual choice for evaluation."""
    max_tokens: int = 1024
    """Most tokens sampled per turn (sent as ``max_completion_tokens`` to the chat endpoint,
    ``max_tokens`` to the completions endpoint, which has no other name for it)."""
    timeout_s: float = 60.0
    """Deadline of one request, connect to last byte."""
    retries: int = 2
    """Extra attempts after a failed request (so at most ``retries + 1`` requests per turn)."""
    backoff_s: float = 0.5
    """First wait between attempts; doubles each retry, capped at ``MAX_BACKOFF_S``."""
    tool_format: Literal["native", "hermes"] = "native"
    """``native``: send ``tools`` and render the reply's ``tool_calls``; ``hermes``: the reply text is the action."""
    return_token_ids: bool = False
    """Chat path: ask vLLM (≥ 0.10.2) for the sampled and prompt token ids and logprobs (``last_token_ids``)."""
    enable_thinking: bool | None = None
    """Chat path: sent as ``chat_template_kwargs.enable_thinking`` (Qwen3: ``false`` is its no-think mode);
    ``None`` sends nothing, so the server's template default applies."""
    send_seed: bool = True
    """Send a per-turn sampling seed drawn from the episode's generator, so sampled runs repeat."""

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("the llm agent needs model=NAME (the model the server serves)")
        if urlsplit(self.base_url).scheme not in ("http", "https"):
            raise ValueError(f"base_url must start with http:// or https://, got {self.base_url!r}")
        if self.tool_format not in ("native", "hermes"):
            raise ValueError(f"tool_format must be 'native' or 'hermes', got {self.tool_format!r}")
        if not 0 < self.timeout_s <= 1e9 or self.retries < 0 or not 0 <= self.backoff_s <= 1e9:
            # `not 0 < x` also refuses NaN; 1e9 s: beyond it the socket's deadline overflows
            raise ValueError(
                "timeout_s must be a number of seconds above 0 and at most 1e9, backoff_s from 0 "
                f"to 1e9, retries >= 0; got timeout_s={self.timeout_s}, backoff_s={self.backoff_s}, "
                f"retries={self.retries}"
            )
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be positive, got {self.max_tokens}")
        if not 0 <= self.temperature <= 1e9:  # NaN too
            raise ValueError(f"temperature must be from 0 (greedy) up, got {self.temperature}")


def chat_completions_url(base_url: str) -> str:
    """The chat-completions endpoint of a server root or a ``/v1`` base URL."""
    return endpoint_url(base_url, "chat/completions")


def completions_url(base_url: str) -> str:
    """The (text) completions endpoint, which takes a prompt of token ids."""
    return endpoint_url(base_url, "completions")


def wire_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The messages as sent: assistant reasoning under both ``reasoning`` and ``reasoning_content``.

    Example:
        >>> wire_messages([{"role": "assistant", "content": "x", "reasoning_content": "r"}])
        [{'role': 'assistant', 'content': 'x', 'reasoning_content': 'r', 'reasoning': 'r'}]
    """
    out = []
    for message in messages:
        m = dict(message)
        if m.get("role") == "assistant":
            reasoning = m.get("reasoning_content", m.get("reasoning"))
            if isinstance(reasoning, str):
                m.setdefault("reasoning_content", reasoning)
                m.setdefault("reasoning", reasoning)
        out.append(m)
    return out


def make_llm_agent(**kwargs: Any) -> LLMAgent:
    """The ``llm`` entry of the agent registry: ``--agent-args`` strings -> :class:`LLMAgentArgs`."""
    return LLMAgent(args_from_strings(LLMAgentArgs, kwargs))


@dataclass(frozen=True)
class CompletionIds:
    """What the completions endpoint sampled for a prompt of ids."""

    token_ids: list[int]
    """The sampled ids, as the server returned them (a stop id such as ``<|im_end|>`` included)."""
    logprobs: list[float] | None
    """One logprob per sampled id, or None when the server sent none that line up."""
    prompt_ids: list[int] | None
    """The prompt ids the server reports it conditioned on (vLLM: ``choices[0].prompt_token_ids``)."""
    finish_reason: str | None = None


class LLMAgent:
    """A client of an OpenAI-compatible server that acts in any agentenv env; see the module docstring."""

    name = "llm"

    def __init__(self, args: LLMAgentArgs) -> None:
        self.args = args
        self.url = chat_completions_url(args.base_url)
        self.shown_url = without_credentials(self.url)
        """The URL as messages and logs show it: a password written into ``base_url`` left out."""
        self.completions_url = completions_url(args.base_url)
        self._api_key = (
            args.api_key
            or os.environ.get("AGENTENV_LLM_API_KEY")
            or os.environ.get("OPENAI_API_KEY")
        )
        self._seed = 0
        self._turn = 0
        self.requests = 0
        """Requests sent so far (all attempts), for reports and tests."""
        self.last_token_ids: list[int] | None = None
        """Ids the server sampled for the last action (``return_token_ids`` only)."""
        self.last_logprobs: list[float] | None = None
        """Their logprobs, when the server sent one per id."""
        self.last_prompt_ids: list[int] | None = None
        """The prompt ids the server conditioned on for the last request."""
        self.last_message: dict[str, Any] | None = None
        """The last assistant message as the server sent it."""

    def reset(
        self,
        obs: str,
        info: Mapping[str, Any],
        *,
        task: Task | None = None,
        rng: np.random.Generator | None = None,
    ) -> None:
        self._seed = int(rng.integers(2**31 - 1)) if rng is not None else 0
        self._turn = 0

    def preflight(self, info: Mapping[str, Any]) -> None:
        """Check the endpoint once before a run (``info`` of a first reset): it answers, serves the model, and
        takes tools when the env offers them and ``tool_format=native`` (see
        :mod:`agentenv.baselines.llm_preflight`); one line and the fix otherwise."""
        from agentenv.baselines.llm_preflight import check_endpoint

        check_endpoint(
            self.args.base_url,
            self.args.model,
            api_key=self._api_key,
            tools=self.args.tool_format == "native" and bool(info.get("tools")),
            timeout_s=self.args.timeout_s,
            temperature=self.args.temperature,
            tool_hint=f"Start vLLM with `{VLLM_TOOL_FLAGS}` (Qwen3; other models name their own "
            "parser), or use --agent-args tool_format=hermes with --env-arg tools_in_prompt=true",
        )

    # ------------------------------------------------------------------ chat path (text evaluation)

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        self._turn += 1
        body = self._request_body(info)
        message, choice, reply = self._complete(body)
        self.last_message = dict(message)
        self.last_token_ids = _ints(choice.get("token_ids"))
        self.last_prompt_ids = _ints(reply.get("prompt_token_ids"))
        if self.last_prompt_ids is None:
            self.last_prompt_ids = _ints(choice.get("prompt_token_ids"))
        self.last_logprobs = _chat_logprobs(choice, self.last_token_ids)
        if self.args.return_token_ids and self.last_token_ids is None:
            log.warning("%s returned no token_ids; is it vLLM >= 0.10.2?", self.shown_url)
        try:
            return action_from_message(message, self.args.tool_format)
        except ValueError as err:  # the endpoint's reply is not a chat message by its grammar
            raise AgentFailure(f"{self.shown_url} replied with {err}") from None

    def _request_body(self, info: Mapping[str, Any]) -> dict[str, Any]:
        args = self.args
        body: dict[str, Any] = {
            "model": args.model,
            "messages": wire_messages(info["messages"]),
            "temperature": args.temperature,
            "max_completion_tokens": args.max_tokens,
        }
        self._add_seed(body)
        if args.tool_format == "native" and info.get("tools"):
            body["tools"] = list(info["tools"])
        if args.enable_thinking is not None:
            body["chat_template_kwargs"] = {"enable_thinking": bool(args.enable_thinking)}
        if args.return_token_ids:
            body["return_token_ids"] = True
            body["logprobs"] = True
        return body

    def _add_seed(self, body: dict[str, Any]) -> None:
        if self.args.send_seed:
            body["seed"] = (self._seed + self._turn) % (2**31 - 1)

    def _complete(
        self, body: Mapping[str, Any]
    ) -> tuple[Mapping[str, Any], Mapping[str, Any], Mapping[str, Any]]:
        """(message, choice, whole reply) of one chat completion, after at most ``retries + 1`` attempts."""
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")

        def attempt() -> tuple[Mapping[str, Any], Mapping[str, Any], Mapping[str, Any]]:
            reply = self._post(self.url, payload, sends_tools=bool(body.get("tools")))
            try:
                choice = reply["choices"][0]
                message = choice["message"]
                if not isinstance(message, Mapping):
                    raise TypeError("message is not an object")
            except (KeyError, IndexError, TypeError) as exc:
                raise Retryable(
                    f"reply without choices[0].message ({type(exc).__name__}: {exc})"
                ) from None
            return message, choice, reply

        return self._retrying(attempt, self.shown_url)

    # ------------------------------------------------------------------ completions path (token-exact)

    def complete_ids(
        self, prompt_ids: Sequence[int], stop_ids: Sequence[int] = ()
    ) -> CompletionIds:
        """Sample a continuation of ``prompt_ids`` from ``/v1/completions``; the prompt is sent as ids.

        The body holds ``prompt`` (a list of ints, so nothing is rendered or
        tokenized server side), ``max_tokens``, ``temperature``, ``seed``,
        ``stop_token_ids`` (``stop_ids``, e.g. the template's ``<|im_end|>``),
        ``return_token_ids: true`` and ``logprobs: 1``. vLLM (≥ 0.10.2)
        answers with ``choices[0].token_ids`` (the sampled ids, a stop id
        included), ``choices[0].prompt_token_ids`` and
        ``choices[0].logprobs.token_logprobs``.

        Raises:
            AgentFailure: the endpoint failed after the retries, or sent no ``token_ids``.
        """
        self._turn += 1
        args = self.args
        body: dict[str, Any] = {
            "model": args.model,
            "prompt": [int(i) for i in prompt_ids],
            "max_tokens": args.max_tokens,
            "temperature": args.temperature,
            "return_token_ids": True,
            "logprobs": 1,
        }
        if stop_ids:
            body["stop_token_ids"] = [int(i) for i in stop_ids]
        self._add_seed(body)
        payload = json.dumps(body).encode("utf-8")
        url = self.completions_url

        def attempt() -> CompletionIds:
            reply = self._post(url, payload, sends_tools=False)
            try:
                choice = reply["choices"][0]
                if not isinstance(choice, Mapping):
                    raise TypeError("choice is not an object")
            except (KeyError, IndexError, TypeError) as exc:
                raise Retryable(f"reply without choices[0] ({type(exc).__name__}: {exc})") from None
            ids = _ints(choice.get("token_ids"))
            if ids is None:
                raise AgentFailure(
                    f"{url} sent no choices[0].token_ids: serve with vLLM >= 0.10.2, which honours return_token_ids"
                )
            prompt = _ints(choice.get("prompt_token_ids"))
            if prompt is None:
                prompt = _ints(reply.get("prompt_token_ids"))
            reason = choice.get("finish_reason")
            return CompletionIds(
                ids,
                _completion_logprobs(choice, ids),
                prompt,
                reason if isinstance(reason, str) else None,
            )

        result = self._retrying(attempt, without_credentials(url))
        self.last_message = None
        self.last_token_ids, self.last_logprobs, self.last_prompt_ids = (
            list(result.token_ids),
            result.logprobs,
            result.prompt_ids,
        )
        return result

    # ------------------------------------------------------------------ transport

    def _retrying(self, attempt: Any, url: str) -> Any:
        def counted() -> Any:
            self.requests += 1
            return attempt()

        def warn(n: int, error: str) -> None:
            log.warning("%s: attempt %d of %d failed: %s", url, n + 1, self.args.retries + 1, error)

        return with_retries(
            counted,
            retries=self.args.retries,
            backoff_s=self.args.backoff_s,
            url=url,
            on_retry=warn,
        )

    def _post(self, url: str, payload: bytes, *, sends_tools: bool) -> Any:
        try:
            return post_json(url, payload, timeout_s=self.args.timeout_s, api_key=self._api_key)
        except HTTPError as exc:
            if exc.status == 400 and sends_tools and "tool" in exc.excerpt.lower():
                raise ToolCallingDisabled(
                    f"{url}: HTTP 400 to a request with tools: the server's tool calling is off. "
                    f"Start vLLM with `{VLLM_TOOL_FLAGS}` (Qwen3; other models name their own parser), "
                    "or use --agent-args tool_format=hermes with --env-arg tools_in_prompt=true. "
                    f"Server said: {exc.excerpt}"
                ) from None
            raise


def _ints(value: Any) -> list[int] | None:
    if not isinstance(value, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) for i in value
    ):
        return None
    return list(value)


def _chat_logprobs(choice: Mapping[str, Any], ids: Sequence[int] | None) -> list[float] | None:
    """One logprob per sampled id from ``choices[0].logprobs.content``, or None when they do not line up."""
    content = (
        (choice.get("logprobs") or {}).get("content")
        if isinstance(choice.get("logprobs"), Mapping)
        else None
    )
    if ids is None or not isinstance(content, list) or len(content) != len(ids):
        return None
    try:
        return [float(entry["logprob"]) for entry in content]
    except (KeyError, TypeError, ValueError):
        return None


def _completion_logprobs(choice: Mapping[str, Any], ids: Sequence[int]) -> list[float] | None:
    """One logprob per sampled id from ``choices[0].logprobs.token_logprobs`` (the completions format)."""
    logprobs = choice.get("logprobs")
    values = logprobs.get("token_logprobs") if isinstance(logprobs, Mapping) else None
    if not isinstance(values, list) or len(values) != len(ids):
        return None
    try:
        return [float(v) for v in values]
    except (TypeError, ValueError):
        return None


# Token-exact rollouts live in their own module; re-exported here, where they always were.
from agentenv.baselines.llm_tokens import TokenRollout, llm_token_rollout  # noqa: E402
