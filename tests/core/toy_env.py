"""A tiny ToolEnv family for contract tests: arithmetic lookups with one tool."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentenv.core import Task, ToolEnv
from agentenv.engine.parsing import Answer
from agentenv.engine.tools import Tool, ToolError, ToolRegistry
from agentenv.engine.turns import Episode

SQUARES = {str(i): i * i for i in range(20)}


class SquareArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    n: int = Field(ge=0, le=1000, description="The number to square.")


def _square(args: SquareArgs) -> dict[str, int]:
    if str(args.n) not in SQUARES:
        raise ToolError(f"no entry for {args.n}")
    return {"n": args.n, "square": SQUARES[str(args.n)]}


class SleepArgs(BaseModel):
    seconds: float = Field(ge=0, le=10)


def _sleep(args: SleepArgs) -> str:
    import time

    time.sleep(args.seconds)
    return "slept"


def _boom(args: SleepArgs) -> str:
    raise ZeroDivisionError("kaboom")


def toy_tools() -> ToolRegistry:
    return ToolRegistry(
        [
            Tool("square", "Square a number from the table.", SquareArgs, _square),
            Tool("sleep", "Sleep.", SleepArgs, _sleep, timeout_s=0.2),
            Tool("boom", "Always fails.", SleepArgs, _boom),
            Tool("big", "Huge output.", SleepArgs, lambda a: "x" * 100_000, max_output_chars=1000),
        ]
    )


class SquareEnv(ToolEnv):
    def __init__(self, **kwargs: Any) -> None:
        tasks = [
            Task(
                prompt=f"What is {i} squared?",
                gold={"answer": str(i * i)},
                split="test",
                kind="square",
            )
            for i in range(10)
        ]
        super().__init__(tasks, toy_tools(), **kwargs)

    def _grade(self, task: Task, answer: Answer | None, episode: Episode) -> dict[str, float]:
        correct = answer is not None and answer.text.strip() == task.gold["answer"]
        return {"accuracy": float(correct)}

    def _task_from_dict(self, data: Mapping[str, Any]) -> Task:
        return Task(prompt=data["question"], gold={"answer": data["answer"]})
