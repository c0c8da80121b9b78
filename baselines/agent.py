"""What an agent is to the evaluation harness, and the table of named agents.

An agent sees what a policy sees (the observation text and ``info``). A
*privileged* scripted agent such as the oracle is also handed the task, since
it exists to prove the task is solvable; a learned policy never gets it.

Example:
    >>> sorted(AGENTS)
    ['bm25', 'llm', 'oracle', 'phenotype-ranker', 'random']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import numpy as np

from agentenv.core import Task


class Agent(Protocol):
    """A policy over text actions."""

    name: str

    def reset(self, obs: str, info: Mapping[str, Any], *, task: Task, rng: np.random.Generator) -> None:
        """Start an episode. ``task`` may only be read by privileged (oracle) agents."""
        ...

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        """Return the next action text."""
        ...


def _random(**kwargs: Any) -> Agent:
    from agentenv.baselines.agent_args import args_from_strings
    from agentenv.baselines.random_agent import RandomAgent, RandomAgentArgs

    return RandomAgent(args_from_strings(RandomAgentArgs, kwargs))


def _oracle(**kwargs: Any) -> Agent:
    from agentenv.baselines.oracle import OracleAgent

    return OracleAgent(**kwargs)


def _phenotype_ranker(**kwargs: Any) -> Agent:
    from agentenv.baselines.phenotype_ranker_agent import PhenotypeRankerAgent

    return PhenotypeRankerAgent(**kwargs)


def _bm25(**kwargs: Any) -> Agent:
    from agentenv.baselines.agent_args import args_from_strings
    from agentenv.baselines.bm25_agent import BM25Agent, BM25AgentArgs

    return BM25Agent(args_from_strings(BM25AgentArgs, kwargs))


def _llm(**kwargs: Any) -> Agent:
    from agentenv.baselines.agent_args import args_from_strings
    from agentenv.baselines.llm_agent import LLMAgent, LLMAgentArgs

    return LLMAgent(args_from_strings(LLMAgentArgs, kwargs))


#: Agent name -> factory taking ``--agent-args`` as keyword arguments.
AGENTS: dict[str, Callable[..., Agent]] = {
    "random": _random,
    "oracle": _oracle,
    "phenotype-ranker": _phenotype_ranker,
    "bm25": _bm25,
    "llm": _llm,
}


def make_agent(name: str, **kwargs: Any) -> Agent:
    """Build a named agent; an unknown name lists the known ones."""
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(sorted(AGENTS))}")
    return AGENTS[name](**kwargs)
