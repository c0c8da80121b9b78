"""The llm agent's start-up check: is the endpoint up, does it serve the model, does it take tools?

Why: without it a dead endpoint was found one episode at a time, each turn
retried (2 min 32 s and 300 retry lines for 100 episodes, about 25 minutes at
1,000). The evaluation runner calls :meth:`LLMAgent.preflight` once, before the
first episode (:func:`agentenv.evaluation.runner.preflight`), and each failure
here is one line naming the URL and the fix (a
:class:`~agentenv.errors.UserInputError`, exit 2), in seconds.

The checks, in order, each bounded by ``PREFLIGHT_TIMEOUT_S``:

1. ``GET {base_url}/models`` answers (connection, HTTP status, JSON);
2. the model is in its ``data[].id`` list (servers that list nothing are trusted);
3. with ``tool_format=native``, a one-token chat completion with one tool is
   accepted (vLLM answers 400 when its tool calling is off).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agentenv.baselines.llm_http import HTTPError, Retryable, endpoint_url, get_json, post_json
from agentenv.errors import UserInputError
from agentenv.evaluation.recorded_args import without_credentials

PREFLIGHT_TIMEOUT_S = 10.0
"""Longest wait for one check: a server that takes longer to list its models is not ready to evaluate."""

_PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "ping",
        "description": "Answer pong.",
        "parameters": {"type": "object", "properties": {}},
    },
}


def check_endpoint(
    base_url: str,
    model: str,
    *,
    api_key: str | None,
    tools: bool,
    timeout_s: float,
    temperature: float = 0.0,
    tool_hint: str = "",
) -> None:
    """Raise :class:`UserInputError` (one line: the URL, what failed, the fix) unless the endpoint can serve a run.

    The URL in the line is shown without a password written into it (:func:`without_credentials`).
    """
    try:
        _check_endpoint(
            base_url,
            model,
            api_key=api_key,
            tools=tools,
            timeout_s=timeout_s,
            temperature=temperature,
            tool_hint=tool_hint,
        )
    except UserInputError as err:
        raise UserInputError(without_credentials(str(err))) from None


def _check_endpoint(
    base_url: str,
    model: str,
    *,
    api_key: str | None,
    tools: bool,
    timeout_s: float,
    temperature: float,
    tool_hint: str,
) -> None:
    timeout_s = min(timeout_s, PREFLIGHT_TIMEOUT_S)
    models_url = endpoint_url(base_url, "models")
    try:
        reply = get_json(models_url, timeout_s=timeout_s, api_key=api_key)
    except Retryable as err:
        raise UserInputError(
            f"llm agent: {models_url} does not answer ({err}); start the server "
            "(e.g. `vllm serve MODEL`) or pass --agent-args base_url=URL"
        ) from None
    except HTTPError as err:
        raise UserInputError(f"llm agent: {models_url}: {_status_fix(err)}") from None
    served = _model_ids(reply)
    if served and model not in served:
        shown = ", ".join(sorted(served)[:10])
        raise UserInputError(
            f"llm agent: {base_url} does not serve model {model!r}; it serves: {shown}. "
            "Pass --agent-args model=ONE_OF_THESE"
        )
    if not tools:
        return
    body = {
        "model": model,
        "messages": [{"role": "user", "content": "ping"}],
        "tools": [_PROBE_TOOL],
        "max_completion_tokens": 1,
        "temperature": temperature,
    }
    chat_url = endpoint_url(base_url, "chat/completions")
    try:
        post_json(chat_url, json.dumps(body).encode("utf-8"), timeout_s=timeout_s, api_key=api_key)
    except Retryable as err:
        raise UserInputError(
            f"llm agent: {chat_url} fails a one-token request ({err}); check the server's log"
        ) from None
    except HTTPError as err:
        if err.status == 400 and "tool" in err.excerpt.lower():
            raise UserInputError(
                f"llm agent: {chat_url} refuses requests with tools (HTTP 400): its tool calling "
                f"is off. {tool_hint}".strip()
            ) from None
        raise UserInputError(f"llm agent: {chat_url}: {_status_fix(err)}") from None


def _model_ids(reply: Any) -> set[str]:
    data = reply.get("data") if isinstance(reply, Mapping) else None
    if not isinstance(data, list):
        return set()
    return {str(m["id"]) for m in data if isinstance(m, Mapping) and "id" in m}


def _status_fix(err: HTTPError) -> str:
    if err.status in (401, 403):
        return (
            f"HTTP {err.status}: the API key is missing or refused; set AGENTENV_LLM_API_KEY "
            "or pass --agent-args api_key=KEY"
        )
    if err.status == 404:
        return "HTTP 404: no OpenAI-compatible API there; base_url should be the server root or its /v1"
    return f"HTTP {err.status}: {' '.join(err.excerpt.split())[:200]}"
