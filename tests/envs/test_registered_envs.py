"""Every registered id passes Gymnasium's checker and replays bit for bit from a seed."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import agentenv
from agentenv.baselines.random_agent import RandomAgent
from agentenv.families import env_specs

IDS = [spec.id for spec in env_specs()]


def test_import_registers_every_id() -> None:
    assert set(agentenv.env_ids()) <= set(gym.registry)


@pytest.mark.parametrize("env_id", IDS)
def test_check_env(env_id: str) -> None:
    env = gym.make(env_id)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def _rollout(env_id: str, seed: int, episodes: int = 3) -> list:
    env = gym.make(env_id)
    agent = RandomAgent()
    trace = []
    for episode in range(episodes):
        obs, info = env.reset(seed=seed + episode)
        agent.reset(obs, info, task=env.unwrapped.task, rng=np.random.default_rng([seed, episode]))
        trace.append((obs, info))
        done = False
        while not done:
            step = env.step(agent.act(obs, info))
            obs, info = step[0], step[4]
            done = step[2] or step[3]
            trace.append(step)
    return trace


@pytest.mark.parametrize("env_id", IDS)
def test_same_seed_same_rollout(env_id: str) -> None:
    assert _rollout(env_id, 11) == _rollout(env_id, 11)
    assert _rollout(env_id, 11) != _rollout(env_id, 12)


@pytest.mark.parametrize("env_id", IDS)
def test_gym_make_with_module_prefix(env_id: str) -> None:
    env = gym.make(f"agentenv:{env_id}")
    obs, info = env.reset(seed=0)
    assert isinstance(obs, str) and obs
    assert {
        "messages",
        "tools",
        "turn",
        "tool_calls",
        "task_id",
        "split",
        "reward_components",
    } <= set(info)
    assert "gold" not in info
