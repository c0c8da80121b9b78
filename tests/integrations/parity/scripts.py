"""The scripted episodes every trainer adapter replays, and their reference records from ``agentenv eval``'s loop.

A :class:`Script` is a fixed list of action texts on one task (split, task index, reset seed).
Fixed text, not an agent: the envs are deterministic, so replaying the same text on the same task
and seed must give the same observations, rewards and transcript through any adapter. The oracle's
script is recorded once from the ``oracle`` agent run through the evaluation runner.

:func:`reference` plays a script through :func:`agentenv.evaluation.runner.run_episode`, the loop
``agentenv eval`` runs, and, where the ``tokens`` extra is installed, through
:class:`~agentenv.tokens.TokenEnv` with the offline Qwen3 template for the token ids a library that
works on ids must reproduce. :func:`policy_ids` is what a scripted model "samples" for an action.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

SINGLE_AGENT_IDS: tuple[str, ...] = (
    "MediaSearch-v0",
    "MediaSearch-SingleTurn-v0",
    "RareDiseaseDiagnosis-v0",
    "RareDiseaseDiagnosis-SingleTurn-v0",
)
SCRIPT_NAMES: tuple[str, ...] = (
    "oracle",
    "wrong_answer",
    "invalid_call",
    "multi_call",
    "truncation",
)
SPLIT = "test"
SEED = 7

WRONG_ANSWERS: Mapping[str, str] = {
    "media_search": "<answer>Casablanca (1942)</answer>",
    "rare_disease": "<answer>OMIM:100800</answer>",
}
"""A well-formed answer that names a real catalog entry other than the gold one (checked by the test)."""
INVALID_CALL = '<tool_call>\n{"name": "search", "arguments": {"query": \n</tool_call>'
"""Broken JSON inside a call block: a parse error observation, never a crash."""
NO_ANSWER = "I am still thinking about it."
"""Text with neither a call nor an answer (the single-turn ids' truncation stand-in)."""


@dataclass(frozen=True)
class Script:
    """One scripted episode: ``actions`` played in order on task ``task_index`` of ``split``, reset with ``seed``."""

    env_id: str
    name: str
    actions: tuple[str, ...]
    split: str = SPLIT
    task_index: int = 0
    seed: int = SEED


@dataclass(frozen=True)
class ParityRecord:
    """What an episode came to: compared field by field between an adapter and the reference."""

    reward: float
    """The episode's return (the sum of its step rewards), rounded to 10 places as ``episodes.jsonl`` is."""
    turns: int
    messages: list[dict[str, Any]]
    """The final transcript, OpenAI chat format."""
    token_ids: list[int] | None = None
    """The whole trajectory's ids (prompt, sampled and env ids interleaved), where the library works on ids."""
    loss_mask: list[int] | None = None
    """1 on sampled ids, 0 on prompt and env ids, aligned with ``token_ids``."""
    terminated: bool | None = None
    truncated: bool | None = None


@functools.cache
def shared_env(env_id: str, split: str = SPLIT) -> gym.Env:
    """One env per (id, split) for the whole process: building one takes up to a second."""
    import agentenv  # noqa: F401 - registers the ids

    return gym.make(env_id, split=split)


class ReplayAgent:
    """An eval agent that plays fixed action texts, in order; running out is a broken script, not a failure."""

    name = "replay"

    def __init__(self, actions: Sequence[str]) -> None:
        self._actions = list(actions)
        self._next = 0

    def reset(
        self, obs: str, info: Mapping[str, Any], *, task: Any, rng: np.random.Generator
    ) -> None:
        self._next = 0

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        if self._next >= len(self._actions):
            raise RuntimeError(
                f"the script ran out of actions after {self._next} turns without the episode ending"
            )
        self._next += 1
        return self._actions[self._next - 1]


class _RecordingAgent:
    """Wraps an eval agent and keeps the texts it played."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.actions, self.task = inner, [], None
        self.name = inner.name

    def reset(
        self, obs: str, info: Mapping[str, Any], *, task: Any, rng: np.random.Generator
    ) -> None:
        self.actions, self.task = [], task
        self.inner.reset(obs, info, task=task, rng=rng)

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        action = self.inner.act(obs, info)
        self.actions.append(action)
        return action


def _run_config(env_id: str, script_seed: int, split: str) -> Any:
    from agentenv.evaluation.runner import RunConfig

    return RunConfig(env_id=env_id, agent="replay", split=split, episodes=1, seed=script_seed)


def _eval_episode(
    env_id: str, agent: Any, *, split: str, task_index: int, seed: int
) -> dict[str, Any]:
    """One episode through the evaluation runner's loop (its episode 0, so reset with ``seed``)."""
    from agentenv.evaluation.runner import run_episode

    return run_episode(
        shared_env(env_id, split), agent, _run_config(env_id, seed, split), 0, task_index
    )


def _first_calls(action: str) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls of an action the oracle rendered (``<tool_call>`` blocks of canonical JSON)."""
    calls = []
    for block in action.split("<tool_call>")[1:]:
        payload = json.loads(block.split("</tool_call>")[0])
        calls.append((payload["name"], payload["arguments"]))
    return calls


@functools.cache
def script(env_id: str, name: str) -> Script:
    """The script ``name`` (one of :data:`SCRIPT_NAMES`) for ``env_id``; each script has its own task."""
    from agentenv.engine import actions as act
    from agentenv.evaluation.agents import make_agent

    if name not in SCRIPT_NAMES:
        raise ValueError(f"unknown script {name!r}; known: {', '.join(SCRIPT_NAMES)}")
    task_index = SCRIPT_NAMES.index(name)
    oracle = _RecordingAgent(make_agent("oracle"))
    _eval_episode(env_id, oracle, split=SPLIT, task_index=task_index, seed=SEED)
    plan = list(oracle.actions)
    env = shared_env(env_id).unwrapped
    max_turns = int(env.max_turns)
    calls = _first_calls(plan[0]) if len(plan) > 1 else []
    family = oracle.task.family
    if name == "oracle":
        actions = plan
    elif name == "wrong_answer":
        actions = [*plan[:-1], WRONG_ANSWERS[family]]
    elif name == "invalid_call":
        actions = [INVALID_CALL, *plan]
    elif name == "multi_call":
        # The oracle's first calls, then each of them again, in one message (or two calls of a
        # tool the single-turn ids do not have: they run nothing and end the episode).
        both = calls + calls if calls else [("search", {"query": "x"}), ("search", {"query": "y"})]
        actions = [act.tool_calls(both), *plan[1:]]
    else:  # truncation: calls (or, on single-turn ids, text) until the turn budget runs out
        actions = [act.tool_calls(calls) if calls else NO_ANSWER] * max_turns
    return Script(env_id, name, tuple(actions), task_index=task_index)


def policy_ids(action: str, template: Any) -> list[int]:
    """The ids a scripted model samples for ``action``: its encoding (specials parsed) and the end-of-turn id."""
    return [*template.encode(action), template.eos_ids[0]]


@functools.cache
def qwen3() -> Any:
    """The offline Qwen3 template the token-level references use (thinking mode on, as Qwen3 defaults)."""
    from agentenv.tokens import qwen3_template

    return qwen3_template()


def token_reference(env_id: str, s: Script) -> tuple[list[int], list[int]]:
    """The script through :class:`~agentenv.tokens.TokenEnv`: the trajectory's ids and loss mask."""
    from agentenv.tokens import TokenEnv

    template = qwen3()
    env = TokenEnv(shared_env(env_id, s.split), template)
    env.reset(seed=s.seed, options={"index": s.task_index})
    info: dict[str, Any] = {}
    for action in s.actions:
        _, _, terminated, truncated, info = env.step(policy_ids(action, template))
        if terminated or truncated:
            break
    return info["input_ids"], info["loss_mask"]


DEADLINE_HIT = "did not finish within"
"""A tool's error when its call ran past the tool deadline: on a busy machine a first (index-building)
call can, and its output then depends on timing, not on the script."""


def hit_deadline(messages: Sequence[Mapping[str, Any]]) -> bool:
    return any(m.get("role") == "tool" and DEADLINE_HIT in str(m.get("content")) for m in messages)


@functools.cache
def _reference(env_id: str, s: Script) -> ParityRecord:
    record = _eval_episode(
        env_id, ReplayAgent(s.actions), split=s.split, task_index=s.task_index, seed=s.seed
    )
    if hit_deadline(record["messages"]):  # once more, on the now warm env
        record = _eval_episode(
            env_id, ReplayAgent(s.actions), split=s.split, task_index=s.task_index, seed=s.seed
        )
    ids = mask = None
    try:
        import tokenizers  # noqa: F401

        import agentenv.tokens.qwen3_tokenizer  # noqa: F401
    except ImportError:  # without the tokens extra there are no ids to compare
        pass
    else:
        ids, mask = token_reference(env_id, s)
    return ParityRecord(
        reward=record["reward"],
        turns=record["turns"],
        messages=record["messages"],
        token_ids=ids,
        loss_mask=mask,
        terminated=record["terminated"],
        truncated=record["truncated"],
    )


def reference(env_id: str, s: Script) -> ParityRecord:
    """The script's record as ``agentenv eval`` computes it (plus TokenEnv's ids where the tokens extra is installed)."""
    return _reference(env_id, s)
