"""A toy family with a prediction limit, and scripted policies that game rewards.

``GuessEnv``: each task hides one colour; the agent may list up to
``LIMIT`` guesses, one per line. It reports the rare-disease style components
(``hit@3``, ``hit@any``, ``n_predictions``, ``over_limit``) so that reward
presets and wrappers can be tested on it without any corpus. Tools: ``lookup``
reveals the colour of a slot; ``hint`` says its first letter.

Policies are privileged scripted action lists (they may read the gold, like
the oracle); the env grades only what they answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentenv.core import Episode, Task, ToolEnv
from agentenv.engine.actions import answer, tool_call, tool_calls
from agentenv.engine.parsing import Answer
from agentenv.engine.tools import Tool, ToolRegistry

LIMIT = 3
COLOURS = ("red", "green", "blue", "cyan", "amber", "black", "white", "olive", "pink", "teal")


class SlotArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    slot: int = Field(ge=0, lt=len(COLOURS), description="Which slot.")


def guess_tools() -> ToolRegistry:
    return ToolRegistry(
        [
            Tool(
                "lookup",
                "The colour in a slot.",
                SlotArgs,
                lambda a: COLOURS[a.slot],
                latency_ms=40.0,
            ),
            Tool(
                "hint",
                "First letter of a slot's colour.",
                SlotArgs,
                lambda a: COLOURS[a.slot][0],
                latency_ms=5.0,
            ),
        ]
    )


class GuessEnv(ToolEnv):
    family = "guess"

    def __init__(self, **kwargs: Any) -> None:
        tasks = [
            Task(
                prompt=f"Which colour is in slot {i}? List at most {LIMIT} guesses.",
                gold={"answer": c},
                split="test",
                kind="guess",
                public={"slot": i},
            )
            for i, c in enumerate(COLOURS)
        ]
        super().__init__(tasks, guess_tools(), **kwargs)

    def _grade(self, task: Task, answer: Answer | None, episode: Episode) -> dict[str, float]:
        preds = (
            [line.strip() for line in answer.text.splitlines() if line.strip()] if answer else []
        )
        gold = task.gold["answer"]
        hit3 = float(gold in preds[:LIMIT])
        return {
            "accuracy": hit3,
            "hit@3": hit3,
            "hit@any": float(gold in preds),
            "n_predictions": float(len(preds)),
            "over_limit": float(len(preds) > LIMIT),
        }


Policy = Callable[[Task], list[str]]


def _every_tool_8_times(task: Task) -> str:
    slot = task.public["slot"]
    return tool_calls([(name, {"slot": slot}) for name in ("lookup", "hint") for _ in range(8)])


POLICIES: dict[str, Policy] = {
    "oracle": lambda t: [tool_call("lookup", slot=t.public["slot"]), answer(t.gold["answer"])],
    "answer at once": lambda t: [answer("red")],
    "honest top-3": lambda t: [answer(COLOURS[:3])],
    "every tool 8x": lambda t: [
        _every_tool_8_times(t),
        tool_call("lookup", slot=t.public["slot"]),
        answer(t.gold["answer"]),
    ],
    "list everything": lambda t: [answer(COLOURS)],
}


def run_policy(env: Any, policy: Policy, index: int) -> tuple[float, dict[str, Any]]:
    """Return (episode return, final info) of one scripted episode on task ``index``."""
    env.reset(seed=0, options={"index": index})
    total, info = 0.0, {}
    for action in policy(env.unwrapped.task):
        _, reward, terminated, truncated, info = env.step(action)
        total += float(reward)
        if terminated or truncated:
            break
    return round(total, 10), info


def mean_return(make_env: Callable[[], Any], policy: Policy) -> float:
    env = make_env()
    returns = [run_policy(env, policy, i)[0] for i in range(len(COLOURS))]
    return round(sum(returns) / len(returns), 10)
