"""The oracle with a scripted ``<think>`` line before every action, for SFT data.

It wraps the ``oracle`` agent (built from the agent registry,
:func:`agentenv.evaluation.agents.make_agent`) and never changes what the
oracle does: the action text is the oracle's, prefixed with
``<think>\\n{line}\\n</think>\\n\\n``. The env strips the block into
``reasoning_content`` and grades the same tool calls and answer, so the
rewards are the oracle's. Lines come from the task family's
``Family.reasoning`` writer, or the generic one
(:func:`agentenv.data.reasoning.writer_for_task`), and are scripted, not
generated (see ``docs/sft-data.md``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from agentenv.core import Task
from agentenv.data.reasoning import ReasoningLines, writer_for_task
from agentenv.engine.actions import think
from agentenv.engine.parsing import Answer, ToolCalls, parse_action
from agentenv.evaluation.agents import Agent, make_agent


class ReasoningOracle:
    """A privileged scripted agent: the oracle's actions, each after one scripted reasoning line.

    The line generator draws from a child of the episode's generator, so the
    lines are fixed by the run's seed and the oracle's own use of ``rng`` (none
    today) could not shift them.
    """

    name = "oracle"

    def __init__(self, inner: Agent | None = None) -> None:
        self.inner = inner if inner is not None else make_agent("oracle")
        self._writer: ReasoningLines | None = None
        self._calls = 0

    def reset(
        self, obs: str, info: Mapping[str, Any], *, task: Task, rng: np.random.Generator
    ) -> None:
        line_rng = rng.spawn(1)[0]
        self.inner.reset(obs, info, task=task, rng=rng)
        self._writer = writer_for_task(task, line_rng)
        self._calls = 0

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        writer = self._writer
        if writer is None:
            raise RuntimeError("reset() before act()")
        action = self.inner.act(obs, info)
        parsed = parse_action(action)
        if isinstance(parsed, Answer):
            return think(writer.answer_line(parsed.text), action)
        if isinstance(parsed, ToolCalls):
            previous = _json_or_none(obs) if self._calls else None
            line = writer.turn_line(
                self._calls, [(c.name, c.arguments) for c in parsed.calls], previous
            )
            self._calls += len(parsed.calls)
            return think(line, action)
        return action  # the oracle never sends unparseable text; pass it through untouched


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
