"""The oracle with a scripted ``<think>`` line before every action, for SFT data.

It wraps :class:`agentenv.baselines.oracle.OracleAgent` and never changes what
the oracle does: the action text is the oracle's, prefixed with
``<think>\\n{line}\\n</think>\\n\\n``. The env strips the block into
``reasoning_content`` and grades the same tool calls and answer, so the
rewards are the oracle's. Lines come from :mod:`agentenv.data.reasoning` and
are scripted, not generated (see ``docs/sft-data.md``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from agentenv.actions import think
from agentenv.baselines.agent import Agent
from agentenv.core import Task
from agentenv.data.reasoning import ReasoningWriter
from agentenv.parsing import Answer, ToolCalls, parse_action


class ReasoningOracle:
    """A privileged scripted agent: the oracle's actions, each after one scripted reasoning line.

    The line generator draws from a child of the episode's generator, so the
    lines are fixed by the run's seed and the oracle's own use of ``rng`` (none
    today) could not shift them.
    """

    name = "oracle"

    def __init__(self, inner: Agent | None = None) -> None:
        if inner is None:
            from agentenv.baselines.oracle import OracleAgent

            inner = OracleAgent()
        self.inner = inner
        self._writer: ReasoningWriter | None = None
        self._calls = 0

    def reset(self, obs: str, info: Mapping[str, Any], *, task: Task, rng: np.random.Generator) -> None:
        line_rng = rng.spawn(1)[0]
        self.inner.reset(obs, info, task=task, rng=rng)
        plan = getattr(task.case, "plan", None) if info.get("tools") else None
        self._writer = ReasoningWriter(plan, getattr(task.case, "extract", None), line_rng)
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
            line = writer.turn_line(self._calls, [(c.name, c.arguments) for c in parsed.calls], previous)
            self._calls += len(parsed.calls)
            return think(line, action)
        return action  # the oracle never sends unparseable text; pass it through untouched


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
