"""One set of reset-option rules for ToolEnv and the dialogue base (agentenv.engine.turns.TaskChooser)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from agentenv.core import Task, ToolEnv
from agentenv.engine.turns import ResetOptionWarning
from agentenv.multiagent.base import DialogueEnv
from agentenv.multiagent.dialogue_state import Judgment

from .toy_env import SquareEnv, toy_tools


class ToyDialogue(DialogueEnv):
    """The square tasks as a dialogue with a silent listener: just enough to reset."""

    def __init__(self) -> None:
        super().__init__(SquareEnv().tasks, toy_tools(), split="test")

    def _lead_system(self) -> str:
        return "Square numbers."

    def _lead_opening(self, task: Task) -> str:
        return task.prompt

    def _other_briefing(self, task: Task, context: Any) -> str:
        return "Listen."

    def _other_private(self, context: Any) -> dict[str, Any]:
        return {}

    def _judge(self, text: str | None, context: Any) -> Judgment:
        return Judgment({"claims": 0})

    def _task_from_dict(self, data: Mapping[str, Any]) -> Task:
        return Task(prompt=data["question"], gold={"answer": data["answer"]})


def _reset(env: Any, options: dict[str, Any] | None) -> Task:
    env.reset(seed=0, options=options)
    return env.task


ENVS = {"ToolEnv": SquareEnv, "DialogueEnv": ToyDialogue}


@pytest.fixture(params=sorted(ENVS))
def env(request: pytest.FixtureRequest) -> Any:
    return ENVS[request.param]()


def test_each_option_pins_a_task(env: Any) -> None:
    fifth = _reset(env, {"index": 5})
    assert fifth is env.tasks[5]
    assert _reset(env, {"index": np.int64(5)}) is fifth, "numpy integers are indices too"
    assert _reset(env, {"task_id": fifth.id}) is fifth
    pinned = Task(prompt="Seven?", gold={"answer": "49"})
    assert _reset(env, {"task": pinned}) is pinned
    assert _reset(env, {"task": {"question": "Two?", "answer": "4"}}).prompt == "Two?"


def test_bad_options_raise_the_same_errors(env: Any) -> None:
    with pytest.raises(ValueError, match="at most one"):
        _reset(env, {"index": 1, "task_id": env.tasks[0].id})
    with pytest.raises(IndexError, match="got True"):
        _reset(env, {"index": True})
    with pytest.raises(IndexError):
        _reset(env, {"index": len(env.tasks)})
    with pytest.raises(KeyError, match="nope"):
        _reset(env, {"task_id": "nope"})
    with pytest.raises(TypeError, match="Task or a task dict"):
        _reset(env, {"task": 3})


def test_unknown_options_are_ignored_with_a_warning(env: Any) -> None:
    drawn = _reset(env, None)
    with pytest.warns(ResetOptionWarning, match=r"reset options \['options'\] are not used"):
        assert _reset(env, {"options": 1}) is drawn, "the task is drawn as without options"
    with pytest.warns(ResetOptionWarning, match="seed_offset"):
        assert _reset(env, {"index": 2, "seed_offset": 1}) is env.tasks[2]


def test_an_env_without_task_dicts_says_so() -> None:
    class NoDicts(SquareEnv):
        _task_from_dict = ToolEnv._task_from_dict

    with pytest.raises(TypeError, match="builds no tasks from dicts"):
        NoDicts().reset(options={"task": {"question": "x"}})
