"""Token-in-token-out: a wrapper whose actions and observations are token ids.

Multi-turn RL trains on the ids the policy sampled, with the logprobs it
sampled them at. The usual loop decodes the sampled ids to text, lets the env
parse and store them as chat messages, and re-renders and re-encodes the whole
conversation for the next turn. That round trip is not the identity: BPE has
many encodings of one string and the tokenizer picks the canonical one, parsers
strip whitespace, tool-call JSON is re-serialised, and templates rewrite old
turns. The trainer then scores ids the policy never sampled.
``docs/token-in-token-out.md`` shows real cases.

:class:`TokenEnv` never re-encodes policy ids. It keeps them in the running
``input_ids``, decodes them only to drive the text env underneath, and encodes
only what the env contributes (the prompt, then each env turn) with a
:class:`~agentenv.tokens.chat_templates.ChatTemplate`.

Example:
    >>> token_space(10).contains([1, 2, 9]), token_space(10).contains([10])
    (True, False)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from numpy.typing import NDArray

from agentenv.tokens.chat_templates import (
    ChatTemplate,
    HFTemplate,
    Qwen3Template,
    TemplateNotPrefixStable,
    hf_template,
    qwen3_template,
)

__all__ = [
    "ChatTemplate",
    "HFTemplate",
    "Qwen3Template",
    "TemplateNotPrefixStable",
    "TokenAction",
    "TokenEnv",
    "hf_template",
    "qwen3_template",
    "token_space",
]

TokenIds = NDArray[np.int64]
TokenAction = Sequence[int] | NDArray[np.integer] | Mapping[str, Sequence[Any]]
"""Sampled ids, or ``{"token_ids": [...], "logprobs": [...]}`` with one logprob per id."""


def token_space(vocab_size: int) -> spaces.Sequence:
    """Variable-length sequences of ids below ``vocab_size``; samples are int64 arrays."""
    return spaces.Sequence(spaces.Discrete(vocab_size), stack=True)


def _logprob(value: Any, position: int) -> float | None:
    """One sampled id's logprob: a number at most 0, or None where the sampler gave none.

    Why refuse NaN or a positive value: it would be stored beside the ids and reach the trainer's
    importance ratios, far from the sampler that produced it.

    >>> _logprob(-0.5, 0), _logprob(None, 1)
    (-0.5, None)
    >>> _logprob(float("nan"), 2)
    Traceback (most recent call last):
    ...
    ValueError: logprobs[2] must be a number <= 0 or None, got nan
    """
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if not number <= 0.0:  # NaN fails this too
        raise ValueError(f"logprobs[{position}] must be a number <= 0 or None, got {value!r}")
    return number


class TokenEnv(gym.Wrapper[TokenIds, TokenAction, str, str]):
    """Wrap a text env (``gymnasium.Env[str, str]`` with ``info["messages"]``) to speak token ids.

    - ``reset`` returns the prompt ids, ending with the first assistant header.
    - ``step(ids)`` takes the ids the policy sampled (a trailing eos, such as
      ``<|im_end|>``, is kept in the trajectory but not passed to the env as
      text) and returns the ids the env appends: the end of the assistant
      turn (unless the policy sampled the template's own, ``eos_ids[0]``: after
      another eos such as Qwen3's ``<|endoftext|>`` it still follows), the tool
      results or error message, the next assistant header.
      When the episode ends with no new message the observation is empty.
    - ``info`` also holds the running, aligned ``input_ids``, ``loss_mask``
      (1 on policy ids, 0 on env ids) and ``logprobs`` (as given for policy
      ids, ``None`` where none were given, 0.0 on env ids), and the
      ``action_text`` the inner env received. After the last step
      ``info["input_ids"]`` is exactly prompt + policy + env ids interleaved.

    Only the inner env's ``info`` is read; its text observation is unused
    (``info["messages"]`` carries the same content with roles).
    """

    def __init__(self, env: gym.Env[str, str], template: ChatTemplate) -> None:
        super().__init__(env)
        self.template = template
        self.observation_space = token_space(template.vocab_size)
        self.action_space = token_space(template.vocab_size)
        self._input_ids: list[int] = []
        self._loss_mask: list[int] = []
        self._logprobs: list[float | None] = []
        self._n_messages = 0
        self._tools: list[Mapping[str, Any]] | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[TokenIds, dict[str, Any]]:
        _, info = self.env.reset(seed=seed, options=options)
        messages = info["messages"]
        self._tools = list(info.get("tools") or []) or None
        prompt = self.template.render_prefix(messages, self._tools)
        self._input_ids, self._loss_mask, self._logprobs = [], [], []
        self._append(prompt, None, policy=False)
        self._n_messages = len(messages)
        return np.asarray(prompt, dtype=np.int64), self._info(info, None)

    def step(
        self, action: TokenAction
    ) -> tuple[TokenIds, SupportsFloat, bool, bool, dict[str, Any]]:
        if not self._input_ids:
            raise ResetNeeded("call reset() before step()")
        ids, logprobs = self._unpack(action)
        stopped = bool(ids) and ids[-1] in self.template.eos_ids  # not shown to the env as text
        # Only the template's own end-of-turn closes the turn: after another eos (Qwen3's
        # <|endoftext|>) the template's <|im_end|> still follows, as every rendering has it.
        closed = stopped and ids[-1] == self.template.eos_ids[0]
        text = self.template.decode(ids[:-1] if stopped else ids)
        _, reward, terminated, truncated, info = self.env.step(text)
        messages = info["messages"]
        new = messages[self._n_messages :]
        if not new or new[0].get("role") != "assistant":
            raise RuntimeError("the inner env must append the assistant message for each action")
        self._n_messages = len(messages)
        self._append(ids, logprobs, policy=True)
        done = bool(terminated or truncated)
        env_ids: list[int] = []
        if len(new) > 1 or not done:
            env_ids = self.template.render_env_turn(
                new[1:], self._tools, closed=closed, add_generation_prompt=not done
            )
        self._append(env_ids, None, policy=False)
        obs = np.asarray(env_ids, dtype=np.int64)
        return obs, reward, terminated, truncated, self._info(info, text)

    def _unpack(self, action: TokenAction) -> tuple[list[int], list[float | None] | None]:
        if isinstance(action, Mapping):
            if "token_ids" not in action:
                raise ValueError(
                    f"a dict action needs 'token_ids' (and may have 'logprobs'); got keys "
                    f"{sorted(map(str, action))[:8]}"
                )
            raw_ids, raw_logprobs = action["token_ids"], action.get("logprobs")
        else:
            raw_ids, raw_logprobs = action, None
        arr = np.asarray(raw_ids)
        if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
            raise ValueError(
                f"token ids must be a flat sequence of ints, got {arr.dtype} {arr.shape}"
            )
        if arr.size and (arr.min() < 0 or arr.max() >= self.template.vocab_size):
            raise ValueError(f"token ids must lie in [0, {self.template.vocab_size})")
        ids = [int(i) for i in arr]
        if raw_logprobs is None:
            return ids, None
        logprobs = [_logprob(x, i) for i, x in enumerate(raw_logprobs)]
        if len(logprobs) != len(ids):
            raise ValueError(f"got {len(logprobs)} logprobs for {len(ids)} token ids")
        return ids, logprobs

    def _append(self, ids: list[int], logprobs: list[float | None] | None, *, policy: bool) -> None:
        self._input_ids.extend(ids)
        self._loss_mask.extend([int(policy)] * len(ids))
        if logprobs is not None:
            self._logprobs.extend(logprobs)
        else:
            self._logprobs.extend([None if policy else 0.0] * len(ids))

    def _info(self, info: dict[str, Any], action_text: str | None) -> dict[str, Any]:
        out = dict(info)
        out["input_ids"] = list(self._input_ids)
        out["loss_mask"] = list(self._loss_mask)
        out["logprobs"] = list(self._logprobs)
        if action_text is not None:
            out["action_text"] = action_text
        return out
