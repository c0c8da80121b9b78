"""One episode of a scripted agent, as the text actions it played: shared by tests that replay them."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np


def agent_actions(
    env: gym.Env, agent: Any, *, index: int, seed: int | None = None, rng_seed: int = 0
) -> tuple[list[str], dict[str, Any]]:
    """The actions ``agent`` plays on task ``index`` of ``env``, and the episode's last info."""
    obs, info = env.reset(seed=seed, options={"index": index})
    agent.reset(obs, info, task=env.unwrapped.task, rng=np.random.default_rng(rng_seed))
    actions, done = [], False
    while not done:
        action = agent.act(obs, info)
        actions.append(action)
        obs, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    return actions, info
