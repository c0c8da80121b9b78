"""Every rare-disease env over one served split shares its task set; a user's own tasks are each env's.

Why: each env built its own, so a task met by another env of the process was sampled and rendered
again (about 2 ms a task), and a server's pool hands any task to any of its envs.
"""

from __future__ import annotations

import gymnasium as gym

import agentenv  # noqa: F401 - registers the ids
from agentenv.multiagent.registry import make


def test_envs_over_one_split_share_each_task_and_serve_the_same_episodes() -> None:
    envs = [gym.make("RareDiseaseDiagnosis-v0", split="test").unwrapped for _ in range(2)]
    firsts = [env.reset(options={"index": 17}) for env in envs]
    assert envs[0].tasks is envs[1].tasks and envs[0].tasks[17] is envs[1].tasks[17]
    assert firsts[0][0] == firsts[1][0] and firsts[0][1]["task_id"] == firsts[1][1]["task_id"]
    dialogue = make("DiagnosisDialogue-v0", split="test")
    assert dialogue.tasks is envs[0].tasks  # the doctor-patient dialogue serves the same cases


def test_what_decides_a_task_keeps_task_sets_apart() -> None:
    base = gym.make("RareDiseaseDiagnosis-v0", split="test").unwrapped.tasks
    others = {
        "single turn (another sampler)": gym.make(
            "RareDiseaseDiagnosis-SingleTurn-v0", split="test"
        ).unwrapped.tasks,
        "split": gym.make("RareDiseaseDiagnosis-v0", split="validation").unwrapped.tasks,
        "presentation": gym.make(
            "RareDiseaseDiagnosis-v0", split="test", presentation="text"
        ).unwrapped.tasks,
        "disease mix": gym.make(
            "RareDiseaseDiagnosis-v0", split="test", disease_mix="uniform"
        ).unwrapped.tasks,
    }
    for name, tasks in others.items():
        assert tasks is not base, name
    real = [gym.make("RareDiseaseDiagnosis-v0", split="real").unwrapped.tasks for _ in range(2)]
    assert real[0] is real[1] and real[0] is not base


def test_a_users_patients_are_each_envs_own(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rows = [{"phenotypes": ["HP:0001250", "HP:0001263"], "diagnosis": ["OMIM:300672"]}]
    envs = [gym.make("RareDiseaseDiagnosis-v0", tasks=rows).unwrapped for _ in range(2)]
    assert envs[0].tasks is not envs[1].tasks
    assert envs[0].reset()[1]["task_id"] == envs[1].reset()[1]["task_id"]
