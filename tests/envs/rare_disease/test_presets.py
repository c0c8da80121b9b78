"""The strict/lenient demonstration: listing 50 diseases wins under lenient and scores exactly 0 under strict.

This is the finding the env exists to prevent: rewarded for "the disease is
among my predictions", a policy learns to list more than k. Both policies
below answer the reference ranker's list for the presented phenotypes; one
stops at 3, the other lists 50. On the first 200 single-turn test patients (numbers
from HPO 2025-01-16, as quoted in docs/envs/rare_disease.md):

=============  ======  =======
policy         strict  lenient
=============  ======  =======
honest top-3   0.435   0.435
list 50        0.0     0.675
=============  ======  =======
"""

from __future__ import annotations

from collections.abc import Callable

import gymnasium as gym
import numpy as np
import pytest

from agentenv.core import Task
from agentenv.engine.actions import answer
from agentenv.envs.rare_disease.tools.diagnosis_tools import reference_ranker

EPISODES = 200
Policy = Callable[[Task], str]


def _ranked(env: gym.Env, n: int) -> Policy:
    ranker = reference_ranker(env.unwrapped.kb)
    return lambda task: answer([d for d, _ in ranker.rank(task.public["phenotypes"], k=n)])


def _mean(env_id: str, reward: str, top: int, **kwargs: object) -> tuple[float, float]:
    env = gym.make(
        env_id, **{"split": "test", "reward": reward, **kwargs}
    )  # the figures quoted are on test
    policy = _ranked(env, top)
    rewards, hits = [], []
    for index in range(EPISODES):
        env.reset(seed=index, options={"index": index})
        _, r, terminated, _, info = env.step(policy(env.unwrapped.task))
        assert terminated
        rewards.append(r)
        hits.append(info["reward_components"]["accuracy"])
    return float(np.mean(rewards)), float(np.mean(hits))


@pytest.fixture(scope="module")
def table() -> dict[tuple[str, str], float]:
    env_id = "RareDiseaseDiagnosis-SingleTurn-v0"
    return {
        (policy, preset): _mean(env_id, preset, top)[0]
        for policy, top in (("honest top-3", 3), ("list 50", 50))
        for preset in ("strict", "lenient")
    }


def test_listing_50_wins_under_lenient_and_scores_zero_under_strict(table: dict) -> None:
    assert table[("list 50", "strict")] == 0.0
    assert table[("list 50", "lenient")] > table[("honest top-3", "lenient")] + 0.2
    assert table[("list 50", "lenient")] >= 0.65


def test_the_honest_policy_is_unchanged_by_the_preset(table: dict) -> None:
    assert table[("honest top-3", "strict")] == table[("honest top-3", "lenient")]
    assert 0.4 <= table[("honest top-3", "strict")] <= 0.65


def test_the_table_in_the_docstring(table: dict) -> None:
    assert table[("honest top-3", "strict")] == pytest.approx(0.435)
    assert table[("list 50", "lenient")] == pytest.approx(0.675)


def test_over_limit_answers_still_report_hit_at_k_of_the_first_k() -> None:
    strict, hit_at_3 = _mean("RareDiseaseDiagnosis-SingleTurn-v0", "strict", 50)
    honest, honest_hits = _mean("RareDiseaseDiagnosis-SingleTurn-v0", "strict", 3)
    assert strict == 0.0 and hit_at_3 == honest_hits == honest


def test_efficient_preset_charges_tools_in_the_multi_turn_env() -> None:
    env = gym.make("RareDiseaseDiagnosis-v0", reward="efficient")
    from agentenv.envs.rare_disease.agents.oracle import RareDiseaseOracle

    obs, info = env.reset(seed=0)
    agent = RareDiseaseOracle()
    agent.reset(obs, info, task=env.unwrapped.task, rng=np.random.default_rng(0))
    done = False
    while not done:
        obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
        done = terminated or truncated
    c = info["reward_components"]
    assert reward == pytest.approx(1.0 - 0.05 * c["tool_calls"] - 0.02 * c["turns"])
