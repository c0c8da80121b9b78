"""Episode records as ``agentenv eval`` writes them, from the toy square env and scripted answers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from agentenv.core import Task
from agentenv.engine.actions import answer, tool_call
from agentenv.evaluation.runner import RunConfig, run_episode

from ..core.toy_env import SquareEnv


class ScriptedAgent:
    """Right (in varied spellings) on even tasks, wrong on odd ones, no answer on task 9."""

    name = "scripted"

    def reset(
        self, obs: str, info: Mapping[str, Any], *, task: Task, rng: np.random.Generator
    ) -> None:
        self.index = int(task.prompt.split()[2])
        self.gold = task.gold["answer"]
        self.called = False

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        if self.index == 9:
            return "thinking out loud"
        if not self.called:
            self.called = True
            return tool_call("square", n=self.index)
        if self.index % 2 == 0:
            return answer(f" The {self.gold}. " if self.index % 4 == 0 else self.gold)
        return answer(str(int(self.gold) + 1))


def toy_records() -> list[dict[str, Any]]:
    env = SquareEnv(max_turns=3)
    config = RunConfig(env_id="Square-toy", agent="scripted")
    return [run_episode(env, ScriptedAgent(), config, i, i) for i in range(10)]
