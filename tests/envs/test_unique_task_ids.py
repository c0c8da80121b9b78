"""Every split of every registered id serves tasks whose ids are unique.

Why it matters: a ``task_id`` (``reset(options={"task_id": ...})``, a TRL row)
must name one task. ``Task.id`` hashes the public content only, so two tasks
that show the same thing share an id, and whoever resolves it grades one
against the other's gold. The check builds every task of the split, as a
trainer's id index does; the rare-disease train splits (32,821 simulated
patients, ~30 s each) run under ``slow``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import gymnasium as gym
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.core import Task
from agentenv.envs.media_search.tasks import question_tasks
from agentenv.envs.media_search.tasks.question_tasks import SPLITS as MEDIA_SPLITS
from agentenv.envs.rare_disease.patients.splits import SPLITS as RARE_SPLITS
from agentenv.families import dialogue_specs, env_specs, family_of_env
from agentenv.multiagent import make as make_dialogue

SPLITS = tuple(dict.fromkeys((*RARE_SPLITS, *MEDIA_SPLITS)))
"""The splits every id serves (both families name the same three)."""
EXTRA_SPLITS = tuple(dict.fromkeys(("real", "casual", *getattr(question_tasks, "EVAL_SPLITS", ()))))
"""Evaluation-only splits some ids serve: each is checked where the id accepts its name."""
DIALOGUES = {spec.id for spec in dialogue_specs()}
IDS = [spec.id for spec in env_specs()] + sorted(DIALOGUES)
SLOW = {(i, "train") for i in IDS if family_of_env(i).name == "rare_disease"}
"""Simulated-patient train splits: each task samples and ranks a patient (~1 ms), so ~30 s a split."""
COVERED = {("DiagnosisDialogue-v0", "train"), ("RareDiseaseDiagnosis-SingleTurn-v0", "train")}
"""Train splits whose whole-split check would repeat another's (about 33 s each, a tenth of the suite):
the dialogue serves RareDiseaseDiagnosis-v0's train cases (checked whole below, and its first tasks are
compared in ``test_the_dialogue_serves_the_multi_turn_train_cases``), and the single-turn cases' distinct
presentations are checked by the shipped-plan rescan in ``tests/envs/rare_disease/test_unique_cases.py``."""


def served_tasks(env_id: str, split: str) -> Sequence[Task]:
    """The tasks an env of ``env_id`` serves for ``split`` (a dialogue's as well as a single agent's)."""
    if env_id in DIALOGUES:
        return make_dialogue(env_id, split=split).tasks
    return gym.make(env_id, split=split).unwrapped.tasks


def assert_unique_ids(env_id: str, split: str, tasks: Sequence[Task]) -> None:
    ids = Counter(tasks[i].id for i in range(len(tasks)))
    shared = {task_id: n for task_id, n in ids.items() if n > 1}
    assert not shared, (
        f"{env_id} {split}: {len(shared)} ids name several tasks, e.g. {list(shared.items())[:3]}"
    )
    assert len(tasks) > 0


def test_the_ids_and_splits_cover_every_family() -> None:
    assert SPLITS == ("train", "validation", "test")
    families = {family_of_env(i).name for i in IDS}
    assert {"media_search", "rare_disease"} <= families
    assert {"MediaConcierge-v0", "DiagnosisDialogue-v0"} <= DIALOGUES


@pytest.mark.parametrize(
    ("env_id", "split"),
    [
        pytest.param(i, s, marks=[pytest.mark.slow] if (i, s) in SLOW else [])
        for i in IDS
        for s in SPLITS
        if (i, s) not in COVERED
    ],
)
def test_task_ids_are_unique_within_the_split(env_id: str, split: str) -> None:
    assert_unique_ids(env_id, split, served_tasks(env_id, split))


@pytest.mark.parametrize(("env_id", "split"), [(i, s) for i in IDS for s in EXTRA_SPLITS])
def test_task_ids_are_unique_within_an_evaluation_split(env_id: str, split: str) -> None:
    try:
        tasks = served_tasks(env_id, split)
    except ValueError as err:
        if "split" not in str(err):
            raise
        pytest.skip(f"{env_id} serves no {split!r} split")
    assert_unique_ids(env_id, split, tasks)


def test_the_dialogue_serves_the_multi_turn_train_cases() -> None:
    dialogue, single = (
        served_tasks("DiagnosisDialogue-v0", "train"),
        served_tasks("RareDiseaseDiagnosis-v0", "train"),
    )
    assert len(dialogue) == len(single)
    assert [dialogue[i].id for i in range(200)] == [single[i].id for i in range(200)]
