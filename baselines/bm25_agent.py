"""The ``bm25`` agent: retrieve once, read the top hit, answer. No learning, no reasoning.

It is the floor every retrieval-augmented policy must clear. How to retrieve
and what to read out of the top hit depend on the family's prompts and tools
(a film record's director, a disease id), so each family supplies that part
as its ``Family.bm25`` strategy, e.g.
:class:`~agentenv.envs.media_search.agents.bm25_strategy.MediaSearchBM25` and
:class:`~agentenv.envs.rare_disease.agents.bm25_strategy.RareDiseaseBM25`. This agent
reads the family's name from the task (and nothing else of it), builds that
family's strategy once with its own args, and delegates.

The strategy is handed no task: like a policy, it reads only the observation
and ``info``. Everything is deterministic; there is no random choice.

Options: ``k`` (hits per search) is every strategy's. A family's own options
come from its strategy: a strategy class may declare ``options``, a dataclass
of the ``--agent-args`` it reads (rare disease's ``max_diseases``), so an
outside family adds its own without touching this file. The strategy is built
with :class:`BM25StrategyArgs`: ``k`` and its own options, converted.

Example:
    >>> make_bm25_agent(k="3").args
    BM25AgentArgs(k=3, family_options={})
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentenv.core import Task
from agentenv.evaluation.agents import Agent, UnsupportedEnv, family_agent_part
from agentenv.evaluation.arguments import args_from_strings

__all__ = ["BM25Agent", "BM25AgentArgs", "BM25StrategyArgs", "UnsupportedEnv", "make_bm25_agent"]


@dataclass
class BM25AgentArgs:
    """Knobs of the bm25 agent (``--agent-args k=5``): the generic ``k``, and each family's own options."""

    k: int = 5
    """Number of hits the one search asks for (media); only the first is read."""
    family_options: Mapping[str, Any] = field(default_factory=dict)
    """Family name -> that family's strategy options (an instance of its ``options`` dataclass),
    for the families whose options were given; see :func:`family_options`."""

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError(f"k must be >= 1, got {self.k}")


@dataclass(frozen=True)
class BM25StrategyArgs:
    """What a family's bm25 strategy is built with: the generic ``k``, and its own options (or ``None``)."""

    k: int
    options: Any = None
    """An instance of the strategy's ``options`` dataclass (defaults filled), or ``None`` if it declares none."""


def strategy_options(strategy: Any) -> type | None:
    """The options dataclass a bm25 strategy declares (its ``options`` attribute), or ``None``."""
    options = getattr(strategy, "options", None)
    return options if isinstance(options, type) and dataclasses.is_dataclass(options) else None


def family_options(given: Mapping[str, Any]) -> dict[str, Any]:
    """Family name -> its strategy's options, converted from ``given`` (``--agent-args`` beyond the generic ones).

    Each key must be an option some registered family's strategy declares; an unknown key is an
    error listing the generic and the family options. A key two families declare goes to both.
    """
    if not given:
        return {}
    from agentenv.families import families, resolve

    declared = {
        f.name: options
        for f in families()
        if f.bm25 is not None and (options := strategy_options(resolve(f.bm25))) is not None
    }
    names = {
        name: {fl.name for fl in dataclasses.fields(cls) if fl.init}
        for name, cls in declared.items()
    }
    unknown = sorted(set(given) - {key for keys in names.values() for key in keys})
    if unknown:
        offered = (
            "; ".join(f"{', '.join(sorted(keys))} ({name})" for name, keys in names.items())
            or "none"
        )
        raise ValueError(
            f"unknown argument {unknown[0]!r} for the bm25 agent; known: "
            f"{', '.join(f.name for f in dataclasses.fields(BM25AgentArgs) if f.name != 'family_options')}"
            f", and the families' options: {offered}"
        )
    return {
        name: args_from_strings(declared[name], {k: v for k, v in given.items() if k in keys})
        for name, keys in names.items()
        if keys & set(given)
    }


def make_bm25_agent(**kwargs: Any) -> BM25Agent:
    """The ``bm25`` entry of the agent registry: ``--agent-args`` strings -> :class:`BM25AgentArgs`."""
    generic = {f.name for f in dataclasses.fields(BM25AgentArgs)} - {"family_options"}
    args = args_from_strings(BM25AgentArgs, {k: v for k, v in kwargs.items() if k in generic})
    args.family_options = family_options({k: v for k, v in kwargs.items() if k not in generic})
    return BM25Agent(args)


class BM25Agent:
    """Delegates each episode to the bm25 strategy of the task's family; see the module docstring."""

    name = "bm25"

    def __init__(self, args: BM25AgentArgs | None = None) -> None:
        self.args = args or BM25AgentArgs()
        self._strategies: dict[
            str, Agent
        ] = {}  # one per family, kept across episodes (readers cache)
        self._strategy: Agent | None = None

    def reset(
        self,
        obs: str,
        info: Mapping[str, Any],
        *,
        task: Task | None = None,
        rng: np.random.Generator | None = None,
    ) -> None:
        if task is None:
            raise UnsupportedEnv(
                "the bm25 agent needs the task to find its family (it reads task.family only)"
            )
        strategy = self._strategies.get(task.family)
        if strategy is None:
            factory = family_agent_part("bm25", task.family, "bm25", "a bm25 strategy")
            strategy = self._strategies[task.family] = factory(
                self._strategy_args(task.family, factory)
            )
        self._strategy = strategy
        strategy.reset(obs, info, task=None, rng=rng)  # type: ignore[arg-type]  # a baseline never reads the task

    def _strategy_args(self, family: str, factory: Any) -> BM25StrategyArgs:
        """``k`` and the family's own options: those given, else its options' defaults (``None`` if it declares none)."""
        options = self.args.family_options.get(family)
        if options is None and (cls := strategy_options(factory)) is not None:
            options = cls()
        return BM25StrategyArgs(k=self.args.k, options=options)

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        if self._strategy is None:
            raise RuntimeError("reset() before act()")
        return self._strategy.act(obs, info)
