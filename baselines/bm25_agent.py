"""The ``bm25`` agent: retrieve once, read the top hit, answer. No learning, no reasoning.

It is the floor every retrieval-augmented policy must clear. How to retrieve
and what to read out of the top hit depend on the family's prompts and tools
(a film record's director, a disease id), so each family supplies that part
as its ``Family.bm25`` strategy, e.g.
:class:`~agentenv.envs.media_search.bm25_strategy.MediaSearchBM25` and
:class:`~agentenv.envs.rare_disease.bm25_strategy.RareDiseaseBM25`. This agent
reads the family's name from the task (and nothing else of it), builds that
family's strategy once with its own args, and delegates.

The strategy is handed no task: like a policy, it reads only the observation
and ``info``. Everything is deterministic; there is no random choice.

Example:
    >>> make_bm25_agent(k="3").args
    BM25AgentArgs(k=3, max_diseases=None)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentenv.arguments import args_from_strings
from agentenv.core import Task
from agentenv.evaluation.agents import Agent, UnsupportedEnv, family_agent_part

__all__ = ["BM25Agent", "BM25AgentArgs", "UnsupportedEnv", "make_bm25_agent"]


@dataclass
class BM25AgentArgs:
    """Knobs of the bm25 agent (``--agent-args k=5``); each family's strategy reads those it uses."""

    k: int = 5
    """Number of hits the one search asks for (media); only the first is read."""
    max_diseases: int | None = None
    """How many diseases to answer; ``None`` reads the limit from the prompt (3 by default)."""

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError(f"k must be >= 1, got {self.k}")
        if self.max_diseases is not None and self.max_diseases < 1:
            raise ValueError(f"max_diseases must be >= 1, got {self.max_diseases}")


def make_bm25_agent(**kwargs: Any) -> BM25Agent:
    """The ``bm25`` entry of the agent registry: ``--agent-args`` strings -> :class:`BM25AgentArgs`."""
    return BM25Agent(args_from_strings(BM25AgentArgs, kwargs))


class BM25Agent:
    """Delegates each episode to the bm25 strategy of the task's family; see the module docstring."""

    name = "bm25"

    def __init__(self, args: BM25AgentArgs | None = None) -> None:
        self.args = args or BM25AgentArgs()
        self._strategies: dict[str, Agent] = {}  # one per family, kept across episodes (readers cache)
        self._strategy: Agent | None = None

    def reset(self, obs: str, info: Mapping[str, Any], *, task: Task | None = None,
              rng: np.random.Generator | None = None) -> None:
        if task is None:
            raise UnsupportedEnv("the bm25 agent needs the task to find its family (it reads task.family only)")
        strategy = self._strategies.get(task.family)
        if strategy is None:
            strategy = self._strategies[task.family] = family_agent_part(
                "bm25", task.family, "bm25", "a bm25 strategy")(self.args)
        self._strategy = strategy
        strategy.reset(obs, info, task=None, rng=rng)  # type: ignore[arg-type]  # a baseline never reads the task

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        if self._strategy is None:
            raise RuntimeError("reset() before act()")
        return self._strategy.act(obs, info)
