"""The menu and the features are functions of the public text alone.

Two tasks with the same public text but another task's gold and private case
(``Task.gold``, ``Task.case``) must give the same features and the same
action text at every step of the same action sequence; only the grade may
differ. The rare-disease tasks are built by swapping the private parts of
real split tasks; the media tasks come from a user tasks file with one
question and two different answers.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from agentenv.lessons.structured import make_structured


def _rollout(env, options: dict, actions: list[int]) -> list[tuple[list[float], str | None]]:
    obs, info = env.reset(seed=0, options=options)
    seen = [(obs.tolist(), None)]
    for action in actions:
        obs, _, terminated, truncated, info = env.step(action)
        seen.append((obs.tolist(), info["structured"]["action_text"]))
        if terminated or truncated:
            break
    return seen


@pytest.mark.parametrize(
    "env_id",
    [
        "RareDiseaseDiagnosis-v0",
        "RareDiseaseDiagnosis-SingleTurn-v0",
        "MediaSearch-v0",
        "MediaSearch-SingleTurn-v0",
    ],
)
def test_same_public_task_other_gold_gives_the_same_menu_and_features(env_id: str) -> None:
    env = make_structured(env_id, split="validation")
    tasks = env.unwrapped.tasks
    rng = np.random.default_rng(0)
    for i in range(3):
        task, other = tasks[i], tasks[i + 10]
        assert task.gold != other.gold
        swapped = dataclasses.replace(task, gold=other.gold, case=other.case, id=task.id)
        tools = [j for j, label in enumerate(env.menu.labels) if not label.startswith("answer")]
        answers = [j for j, label in enumerate(env.menu.labels) if label.startswith("answer")]
        actions = [*rng.permutation(tools).tolist(), int(rng.choice(answers))]
        assert _rollout(env, {"task": task}, actions) == _rollout(env, {"task": swapped}, actions)


def test_user_tasks_with_one_question_and_two_answers() -> None:
    # One task file may not repeat a question (it could not be answered both ways), so the two
    # tasks come as reset options: the policy's view must not depend on which answer is gold.
    question = "Who directed Heat?"
    env = make_structured("MediaSearch-v0")
    actions = [0, 1, 3, env.menu.labels.index("answer director of opened film")]
    first = _rollout(env, {"task": {"question": question, "answer": "Michael Mann"}}, actions)
    second = _rollout(env, {"task": {"question": question, "answer": "Al Pacino"}}, actions)
    assert first == second
    assert (
        first[-1][1].startswith("<answer>") and "unknown" not in first[-1][1]
    )  # a director was read
