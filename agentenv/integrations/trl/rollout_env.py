"""One rollout's env for TRL: the base class whose subclasses carry one method per env tool.

Why apart: it is what TRL holds per rollout (``reset`` and the tool calls), distinct from the
factory that builds its subclasses (:mod:`agentenv.integrations.trl`) and the reward that
replays its messages (:mod:`agentenv.integrations.trl.rewards`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from agentenv.engine.actions import tool_call as render_tool_call
from agentenv.integrations.trl.episodes import (
    EpisodeKey,
    EpisodeResult,
    FactorySpec,
    TaskOption,
    default_split,
    derive_seed,
    make_episode_env,
    pinned_task,
    remember_drawn,
    split_tasks,
    whole_number,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from agentenv.core import Task

__all__ = ["EPISODE_OVER", "LIVE_TURNS_PER_TURN", "AgentEnvTRL"]

EPISODE_OVER = "The episode is over; this call was not run. Stop here."
LIVE_TURNS_PER_TURN = 32
"""The live env runs one call per step, so its budget is the env's turn budget times the most calls
one action may hold (32, the parser's limit): the live env never ends an episode the referee would not."""


# ----------------------------------------------------------------------------- one rollout's env
class AgentEnvTRL:
    """One rollout's env for TRL; :class:`~agentenv.integrations.trl.AgentEnvFactory` makes subclasses with one method per env tool.

    Public attributes (read them, e.g. in callbacks): ``episode`` (the :class:`EpisodeKey` of the
    current episode), ``info`` (the live env's last ``info``), ``result`` (the :class:`EpisodeResult`
    the reward function computed for the last rollout, when TRL passed it ``environments``).
    """

    env_id: ClassVar[str] = ""

    def __init__(self, factory: FactorySpec, number: int = 0) -> None:
        if factory.env_id != self.env_id:
            raise ValueError(f"{type(self).__name__} serves {self.env_id}, not {factory.env_id}")
        self._factory = factory
        self._number = int(number)
        self._episodes = 0
        self._env = make_episode_env(factory.env_id, factory.make_kwargs)
        self._budget = self._env.unwrapped.max_turns
        self._live = False
        self._task: Task | None = None
        self.episode: EpisodeKey | None = None
        self.info: dict[str, Any] = {}
        self.result: EpisodeResult | None = None

    # -------------------------------------------------------------- TRL contract
    def reset(self, **row: Any) -> str | None:
        """Start an episode on the row's task; return the prompt text only when the row pins none."""
        factory = self._factory
        pinned = pinned_task(factory, row, self._env)
        if pinned is None:
            split = default_split(factory)
            tasks, _ = split_tasks(factory, split, self._env)
            rng = np.random.default_rng([factory.seed, self._number, self._episodes])
            task: TaskOption = tasks[int(rng.integers(len(tasks)))]
            seed = (
                whole_number(row["seed"], "seed")
                if row.get("seed") is not None
                else derive_seed(factory.seed, task.id)
            )
        else:
            task, split, seed = pinned
        self._episodes += 1
        inner = self._env.unwrapped
        inner.max_turns = self._budget  # the system prompt states the env's own budget
        _, self.info = self._env.reset(seed=seed, options={"task": task})
        inner.max_turns = self._budget * LIVE_TURNS_PER_TURN
        self._task = inner.task
        self.episode = EpisodeKey(
            split=self._task.split or split, task_id=self.info["task_id"], seed=seed
        )
        self.result, self._live = None, True
        if pinned is not None:
            return None
        system, user = (m["content"] for m in self.info["messages"][:2])
        text = f"{system}\n\n{user}"
        remember_drawn(text, self.episode)
        return text

    # ------------------------------------------------------------------ helpers
    def _call_tool(self, name: str, arguments: Mapping[str, Any]) -> str:
        if not self._live:
            return EPISODE_OVER
        obs, _, terminated, truncated, self.info = self._env.step(
            render_tool_call(name, **dict(arguments))
        )
        if terminated or truncated:
            self._live = False
        return obs
