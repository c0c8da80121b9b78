"""Vector envs: ``gym.make_vec`` works for every registered id in both modes, and 8 async
MediaSearch envs step exactly like 8 sequential ones, Gymnasium's next-step autoreset included."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.core import Task
from agentenv.engine.actions import answer, tool_call
from agentenv.families import env_specs

SEED = 123
N_ENVS = 8
STEPS = 14


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("env_id", [spec.id for spec in env_specs()])
def test_make_vec_works_for_every_id(env_id: str, mode: str) -> None:
    vec = gym.make_vec(env_id, num_envs=2, vectorization_mode=mode)
    try:
        obs, info = vec.reset(seed=0)
        assert (
            isinstance(obs, tuple) and len(obs) == 2 and all(isinstance(o, str) and o for o in obs)
        )
        assert obs[0] in vec.single_observation_space
        actions = ("<tool_call>{not json</tool_call>", answer("héllo ✓ 漢字"))
        obs, reward, terminated, truncated, info = vec.step(actions)
        assert isinstance(obs, tuple) and reward.shape == terminated.shape == truncated.shape == (
            2,
        )
        assert info["turn"].tolist() == [1, 1]
        assert terminated[1]  # an answer ends any episode
        obs, reward, terminated, truncated, _ = vec.step(actions)
        assert reward[1] == 0.0 and not terminated[1]  # the next step is the autoreset
    finally:
        vec.close()


def policy(i: int, k: int, obs: str, task: Task) -> str:
    """A scripted mix per env and step: tool calls, junk, right and wrong answers.

    Env 7 never answers, so it runs into the turn budget (truncation) and its autoreset.
    """
    move = (i + k) % 6 if i != 7 else (k % 3) * 2
    if move == 0:
        return tool_call("search", query=task.prompt[:80], k=3)
    if move == 1:
        return answer(task.gold["answer"]) if i % 2 == 0 else answer("Definitely Not A Film")
    if move == 2:
        return f"junk é {k} <tool_call>"
    if move == 3:
        return tool_call("get_title", title_id=f"tt{k}{i}")
    if move == 4:
        return tool_call("filter_titles", genre="Comedy", year_min=1990, year_max=1991, limit=2)
    return answer(task.gold["answer"])


@pytest.fixture(scope="module")
def shared() -> dict[str, Any]:
    """One catalog and one search index for all 8 + 8 envs: building them per env would dominate the test."""
    env = gym.make("MediaSearch-v0").unwrapped
    return {"catalog": env.catalog, "retriever": env.retriever}


@pytest.fixture(scope="module")
def expected(shared: dict[str, Any]) -> list[list[tuple[Any, ...]]]:
    """What the vector env should return: N plain envs seeded seed + i, reset the step after an end."""
    steps: list[list[tuple[Any, ...]]] = [[] for _ in range(STEPS)]
    for i in range(N_ENVS):
        env = gym.make("MediaSearch-v0", **shared)
        obs, info = env.reset(seed=SEED + i)
        ended = False
        for k in range(STEPS):
            action = policy(i, k, obs, env.unwrapped.task)
            if ended:
                obs, info = env.reset()
                reward, terminated, truncated = 0.0, False, False
            else:
                obs, reward, terminated, truncated, info = env.step(action)
            ended = terminated or truncated
            steps[k].append(
                (obs, float(reward), bool(terminated), bool(truncated), info["task_id"])
            )
        env.close()
    return steps


@pytest.mark.parametrize("mode", ["async", "sync"])
def test_vector_steps_equal_sequential_steps(
    mode: str, shared: dict[str, Any], expected: list
) -> None:
    vec = gym.make_vec("MediaSearch-v0", num_envs=N_ENVS, vectorization_mode=mode, **shared)
    try:
        obs, _ = vec.reset(seed=SEED)
        got: list[list[tuple[Any, ...]]] = []
        for k in range(STEPS):
            tasks = vec.get_attr("task")
            actions = tuple(policy(i, k, obs[i], tasks[i]) for i in range(N_ENVS))
            obs, reward, terminated, truncated, info = vec.step(actions)
            got.append(
                [
                    (
                        obs[i],
                        float(reward[i]),
                        bool(terminated[i]),
                        bool(truncated[i]),
                        info["task_id"][i],
                    )
                    for i in range(N_ENVS)
                ]
            )
    finally:
        vec.close()
    assert got == expected
    flat = [step for row in expected for step in row]
    assert any(r == 1.0 for _, r, *_ in flat) and any(
        t for *_, t, _ in flat
    )  # rewards and a truncation
    ends = np.array([[s[2] or s[3] for s in row] for row in expected])
    assert ends.sum() >= N_ENVS  # every env ended at least once, so autoresets were exercised
