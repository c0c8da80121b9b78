"""The ``oracle`` agent: hands each episode to its task family's privileged oracle.

An oracle proves that a family's tasks are solvable with its tools, so it is
as specific to a family as the tasks are: each family names its own in
``Family.oracle`` (e.g. :class:`~agentenv.envs.media_search.agents.oracle.MediaSearchOracle`
follows a question's gold tool plan, and
:class:`~agentenv.envs.rare_disease.agents.oracle.RareDiseaseOracle` reads the gold
disease's profile). This agent only reads ``task.family``, looks the family up
in :mod:`agentenv.families` and delegates, so a family kept outside this
package gets ``--agent oracle`` by declaring its oracle. A family that
declares none is :class:`~agentenv.evaluation.agents.UnsupportedEnv`, naming
the families that do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from agentenv.core import Task
from agentenv.evaluation.agents import Agent, family_agent_part


class OracleAgent:
    """A privileged scripted agent: the oracle of the task's family, built fresh for every episode."""

    name = "oracle"

    def __init__(self) -> None:
        self._delegate: Agent | None = None
        self._factories: dict[str, Callable[[], Agent]] = {}

    def reset(
        self, obs: str, info: Mapping[str, Any], *, task: Task, rng: np.random.Generator
    ) -> None:
        factory = self._factories.get(task.family)
        if factory is None:
            factory = self._factories[task.family] = family_agent_part(
                "oracle", task.family, "oracle", "an oracle"
            )
        self._delegate = factory()
        self._delegate.reset(obs, info, task=task, rng=rng)

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        if self._delegate is None:
            raise RuntimeError("reset() before act()")
        return self._delegate.act(obs, info)
