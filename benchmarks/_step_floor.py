"""The two envs the step benchmark compares: agentenv's ``ToolEnv`` and a bare Gymnasium floor.

Both serve the same two-turn episode (a constant tool call, then an answer)
and do the same work per step: read the ``<tool_call>`` JSON, find and run
the tool, write the assistant and tool messages in the OpenAI chat format,
and return the output with an info holding the turn and the conversation.

The floor does only that: no argument validation, no time limit, no error
explanations, no reward components. What ``ToolEnv`` costs on top of it is
the price of those guarantees, which is what the budget bounds (≤ 3× the
floor, or ≤ 8 µs).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import gymnasium as gym
from pydantic import BaseModel, ConfigDict, Field

from agentenv.core import Task, ToolEnv
from agentenv.engine.parsing import Answer
from agentenv.engine.spaces import Text
from agentenv.engine.tools import Tool, ToolRegistry

if TYPE_CHECKING:
    from agentenv.engine.turns import Episode

PROMPT = "Which key opens the door?"
GOLD = "brass"
TOOL_ACTION = '<tool_call>{"name": "lookup", "arguments": {"key": "door"}}</tool_call>'
ANSWER_ACTION = f"<answer>{GOLD}</answer>"
TOOL_OUTPUT = '{"door": "brass"}'


class LookupArgs(BaseModel):
    """The constant tool's one argument, bounded like a real tool's."""

    model_config = ConfigDict(extra="forbid")
    key: str = Field(min_length=1, max_length=64, description="What to look up.")


def lookup(args: LookupArgs) -> str:
    """A constant tool: the step's own cost, with no tool work to hide it."""
    return TOOL_OUTPUT


class ConstantToolEnv(ToolEnv):
    """A ``ToolEnv`` with one constant tool under the default time limit, and exact-match grading."""

    def __init__(self, max_turns: int = 8) -> None:
        tasks = [Task(prompt=PROMPT, gold=GOLD, split="test", kind="constant")]
        tools = ToolRegistry([Tool("lookup", "Look up a key.", LookupArgs, lookup)])
        super().__init__(tasks, tools, max_turns=max_turns)

    def _grade(self, task: Task, answer: Answer | None, *episode: Episode) -> dict[str, float]:
        # ``*episode``: releases before 0.2 called ``_grade(task, answer)``; taking the episode
        # optionally lets ``--against`` time an older tree with this same env.
        return {"accuracy": float(answer is not None and answer.text == task.gold)}


class BareFloorEnv(gym.Env[str, str]):
    """The same episode written directly on ``gymnasium.Env``, with nothing but the work itself."""

    def __init__(self, max_turns: int = 8) -> None:
        self.action_space = Text(32_768)
        self.observation_space = Text(262_144)
        self.max_turns = max_turns
        self.tools = {"lookup": lambda key: TOOL_OUTPUT}
        self.messages: list[dict[str, Any]] = []
        self.turn = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self.messages = [
            {"role": "system", "content": "Use the tools."},
            {"role": "user", "content": PROMPT},
        ]
        self.turn = 0
        return PROMPT, {"turn": 0, "messages": list(self.messages)}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self.turn += 1
        reward, terminated = 0.0, False
        if action.startswith("<answer>"):
            text = action[8:-9].strip()
            self.messages.append({"role": "assistant", "content": action})
            reward, terminated, obs = float(text == GOLD), True, ""
        else:
            call = json.loads(action[11:-12])
            obs = self.tools[call["name"]](**call["arguments"])
            call_id = f"call_{self.turn}_0"
            function = {"name": call["name"], "arguments": json.dumps(call["arguments"])}
            self.messages.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"id": call_id, "type": "function", "function": function}],
                }
            )
            self.messages.append(
                {"role": "tool", "tool_call_id": call_id, "name": call["name"], "content": obs}
            )
        truncated = not terminated and self.turn >= self.max_turns
        return (
            obs,
            reward,
            terminated,
            truncated,
            {"turn": self.turn, "messages": list(self.messages)},
        )
