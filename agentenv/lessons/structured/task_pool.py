"""``TaskPool``: draw training episodes from a fixed subset of a split's tasks.

Why: rare-disease patients are simulated on first use (about 6 ms each, then
cached by the env), so a run that keeps drawing new patients spends most of
its time simulating them; a pool of a few thousand train patients keeps
training at thousands of steps per second on 2 cores. The features are
generic (counts, scores, cues), so a pool this size gives a policy nothing
to memorise. Evaluation never uses a pool: the harness runs its own plan.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np


class TaskPool(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Resets to a task drawn uniformly from part ``part`` of ``parts`` of the first ``size`` tasks of the split.

    ``size`` 0 means every task. The vector envs of one run take disjoint parts, so each task is
    simulated once per run, not once per env. A reset with explicit ``options`` (a task, task id
    or index) is passed through unchanged.
    """

    def __init__(self, env: gym.Env, size: int, part: int = 0, parts: int = 1) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, size=size, part=part, parts=parts)
        gym.Wrapper.__init__(self, env)
        if size < 0:
            raise ValueError(f"train_tasks must be >= 0 (0: every task of the split), got {size}")
        if not 0 <= part < parts:
            raise ValueError(f"part must be in 0..{parts - 1}, got {part}")
        n = len(env.unwrapped.tasks)
        size = n if size == 0 else min(size, n)
        self.first = size * part // parts
        self.size = max(size * (part + 1) // parts - self.first, 1)
        self._draw = np.random.default_rng(0)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict]:
        if seed is not None:
            self._draw = np.random.default_rng([seed, 1])
        if not options:
            options = {"index": self.first + int(self._draw.integers(self.size))}
        return self.env.reset(seed=seed, options=options)
