"""The TRL reward grades the task the env played, on tasks whose presentations once coincided.

Why these tasks: before each split's ids were made unique, ``reward_func``
resolved a shared ``task_id`` to the last task holding it and paid 1.0 for
another task's gold. The ``clean`` sampler draws 41 validation cases into 14
shared presentations, so its validation split has such tasks at test speed.
"""

from __future__ import annotations

from collections import defaultdict

import gymnasium as gym
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.core import Task
from agentenv.corpora.hpo.knowledge_base import load_hpo_kb
from agentenv.engine.actions import answer
from agentenv.envs.rare_disease.patients.simulated import PRESETS, PatientSampler
from agentenv.envs.rare_disease.patients.splits import case_list
from agentenv.envs.rare_disease.patients.unique_cases import presentation_key
from agentenv.integrations.trl import AgentEnvFactory, task_positions

ENV_ID = "RareDiseaseDiagnosis-SingleTurn-v0"
SPLIT = "validation"
KWARGS = {
    "split": SPLIT,
    "sampler": "clean",
    "disease_mix": "uniform",
}  # one case per disease, as case_list


def once_shared_golds() -> list[set[str]]:
    """The golds of each group of validation diseases whose first draws showed one presentation."""
    kb = load_hpo_kb()
    sampler = PatientSampler(kb, PRESETS["clean"])
    groups: defaultdict[tuple, set[str]] = defaultdict(set)
    for case in case_list(kb, SPLIT):
        groups[presentation_key(sampler.sample_case(*case))].add(case.disease_id)
    return [golds for golds in groups.values() if len(golds) > 1]


def test_reward_func_agrees_with_the_env_on_tasks_that_used_to_collide() -> None:
    groups = once_shared_golds()
    assert len(groups) == 14
    env = gym.make(ENV_ID, **KWARGS)
    tasks = env.unwrapped.tasks
    index = {tasks[i].gold["diagnosis"][0]: i for i in range(len(tasks))}
    reward_func = AgentEnvFactory(ENV_ID, seed=0, **KWARGS).reward_func
    checked = 0
    for golds in groups:
        served = sorted(
            g for g in golds if g in index
        )  # a case that found no free presentation is dropped
        for gold in served:
            i = index[gold]
            for said in sorted(golds):
                env.reset(seed=0, options={"index": i})
                _, expected, *_ = env.step(answer(said))
                (paid,) = reward_func(
                    prompts=[None], completions=[answer(said)], task_id=[tasks[i].id], split=[SPLIT]
                )
                assert paid == expected == (1.0 if said == gold else 0.0), (gold, said)
                checked += 1
    assert checked >= 20


def test_an_id_that_names_two_tasks_is_refused() -> None:
    tasks = [
        Task(prompt="Same presentation", gold="a"),
        Task(prompt="Other", gold="b"),
        Task(prompt="Same presentation", gold="c"),
    ]
    with pytest.raises(
        ValueError, match=r"names tasks 0 and 2 of split 'train' of X-v0.*unique within a split"
    ):
        task_positions(tasks, "train", "X-v0")
    assert task_positions(tasks[:2], "train", "X-v0") == {tasks[0].id: 0, tasks[1].id: 1}
