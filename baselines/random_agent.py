"""A random agent: tool calls with random arguments, junk, bad JSON and random answers.

It exists to shake the env: most of what it sends is malformed on purpose, and
the env must turn every such action into an explained error, never a crash.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentenv.core import Task
from agentenv.engine.actions import answer, tool_call
from agentenv.evaluation.arguments import args_from_strings

_WORDS = (
    "the",
    "film",
    "Nolan",
    "1999",
    "drama",
    "seizure",
    "HP:0001250",
    "OMIM:100100",
    "é",
    "🎬",
    "",
    "{",
    "<",
)


@dataclass
class RandomAgentArgs:
    """Knobs of the random agent."""

    answer_prob: float = 0.1
    """Probability of answering (ending the episode) at each turn."""
    junk_prob: float = 0.4
    """Probability of sending malformed text instead of a tool call."""


def make_random_agent(**kwargs: Any) -> RandomAgent:
    """The ``random`` entry of the agent registry: ``--agent-args`` strings -> :class:`RandomAgentArgs`."""
    return RandomAgent(args_from_strings(RandomAgentArgs, kwargs))


class RandomAgent:
    """Draws every action from the episode's generator; deterministic given the seed."""

    name = "random"

    def __init__(self, args: RandomAgentArgs | None = None) -> None:
        self.args = args or RandomAgentArgs()
        self.rng = np.random.default_rng(0)

    def reset(
        self, obs: str, info: Mapping[str, Any], *, task: Task, rng: np.random.Generator
    ) -> None:
        self.rng = rng

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        r = self.rng.random()
        if r < self.args.answer_prob:
            return answer(self._phrase())
        if r < self.args.answer_prob + self.args.junk_prob:
            return self._junk()
        tools = info.get("tools") or []
        if not tools:
            return answer(self._phrase())
        schema = tools[int(self.rng.integers(len(tools)))]["function"]
        props = schema["parameters"].get("properties", {})
        arguments = {
            name: self._value(spec) for name, spec in props.items() if self.rng.random() < 0.8
        }
        return tool_call(schema["name"], **arguments)

    def _phrase(self) -> str:
        n = int(self.rng.integers(1, 5))
        return " ".join(_WORDS[int(i)] for i in self.rng.integers(len(_WORDS), size=n))

    def _value(self, spec: Mapping[str, Any]) -> Any:
        kind = spec.get("type")
        if "enum" in spec:
            return spec["enum"][int(self.rng.integers(len(spec["enum"])))]
        if kind == "integer":
            return int(self.rng.integers(-5, 3000))
        if kind == "number":
            return float(np.round(self.rng.normal(5, 5), 2))
        if kind == "boolean":
            return bool(self.rng.random() < 0.5)
        if kind == "array":
            return [self._phrase() for _ in range(int(self.rng.integers(0, 3)))]
        return self._phrase()

    def _junk(self) -> str:
        choices = (
            lambda: self._phrase(),
            lambda: "<tool_call>" + self._phrase(),
            lambda: '<tool_call>{"name": "search", "arguments": {"query": }}</tool_call>',
            lambda: json.dumps({"tool_calls": self._phrase()}),
            lambda: "<think>" + self._phrase(),
            lambda: "",
            lambda: "<answer></answer>",
            lambda: '{"answer": null}',
        )
        return choices[int(self.rng.integers(len(choices)))]()
