"""The episode context: made by ``_start_episode``, handed to tools that take it and to ``_grade``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from agentenv.core import Task, ToolEnv
from agentenv.engine.actions import answer, tool_call
from agentenv.engine.parsing import Answer
from agentenv.engine.tools import Tool, ToolRegistry
from agentenv.engine.turns import Episode


class NoArgs(BaseModel):
    pass


@dataclass
class Counter:
    task_id: str
    taps: int = 0


def tap(args: NoArgs, counter: Counter | None) -> dict[str, int]:
    counter.taps += 1
    return {"taps": counter.taps}


class TapEnv(ToolEnv):
    """Tap as often as the task says, then answer; the grader reads the episode's count."""

    def __init__(self, **kwargs: Any) -> None:
        tasks = [Task(prompt=f"Tap {n} times.", gold={"taps": n}) for n in (1, 2, 3)]
        tools = ToolRegistry(
            [
                Tool("tap", "Tap once.", NoArgs, tap, takes_context=True),
                Tool("peek", "No context.", NoArgs, lambda a: "ok"),
            ]
        )
        super().__init__(tasks, tools, **kwargs)

    def _start_episode(self, task: Task) -> Counter:
        return Counter(task.id)

    def _grade(self, task: Task, answer: Answer | None, episode: Episode) -> dict[str, float]:
        return {
            "accuracy": float(episode.context.taps == task.gold["taps"]),
            "taps": float(episode.context.taps),
        }


def test_tools_and_grader_share_the_episode_context() -> None:
    env = TapEnv()
    env.reset(seed=0, options={"index": 1})
    assert env.step(tool_call("tap"))[0] == '{"taps": 1}'
    assert env.step(tool_call("peek"))[0] == "ok"
    assert env.step(tool_call("tap"))[0] == '{"taps": 2}'
    _, reward, terminated, _, info = env.step(answer("done"))
    assert terminated and reward == 1.0 and info["reward_components"]["taps"] == 2.0


def test_each_episode_gets_a_fresh_context() -> None:
    env = TapEnv()
    env.reset(seed=0, options={"index": 0})
    first = env._episode.context
    env.step(tool_call("tap"))
    env.reset(seed=0, options={"index": 0})
    assert env._episode.context is not first and env._episode.context.taps == 0
    assert env.step(tool_call("tap"))[0] == '{"taps": 1}'


def test_contract_attributes_have_defaults() -> None:
    env = TapEnv()
    assert (
        dict(env.corpus_checksums) == {}
        and env.reward_config.name == "strict"
        and len(env.tools) == 2
    )


def test_a_family_written_for_the_two_argument_grade_hook_still_grades() -> None:
    from .toy_env import SquareEnv

    class OldStyleSquares(SquareEnv):
        def _grade(self, task: Task, answer: Answer | None) -> dict[str, float]:  # the earlier hook
            return {
                "accuracy": float(answer is not None and answer.text.strip() == task.gold["answer"])
            }

    env = OldStyleSquares()
    env.reset(seed=0, options={"index": 3})
    _, reward, terminated, _, info = env.step("<answer>9</answer>")
    assert terminated and reward > 0 and info["reward_components"]["accuracy"] == 1.0
    env.reset(seed=0, options={"index": 3})
    assert env.step("<answer>8</answer>")[4]["reward_components"]["accuracy"] == 0.0
