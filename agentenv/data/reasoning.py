"""Scripted reasoning lines for the oracle's SFT turns: the generic writer and the family lookup.

Why script them at all: a Qwen3-style policy writes ``<think>…</think>`` before
every tool call and answer. SFT data whose assistant turns never think teaches
the model to skip that block, so the oracle's turns get one short line in it.

Why be honest about it: the line is *not* a model's reasoning. It is one of a
few fixed phrasings per step, picked with the episode's seeded generator. It
teaches the format, not reasoning skill. ``docs/sft-data.md`` says so.

What a line can say depends on the family (a film question's plan knows the
record is opened "to read its director"), so a family may name a writer
factory ``(task, rng) -> writer`` in ``Family.reasoning`` (MediaSearch does,
in :mod:`agentenv.envs.media_search.agents.reasoning`). A family without one gets
:class:`GenericReasoningWriter`: "Next I'll call {tool}." lines and answer
lines that claim nothing about a plan. :func:`writer_for_task` picks.

Example:
    >>> import numpy as np
    >>> writer = GenericReasoningWriter(np.random.default_rng(0))
    >>> writer.turn_line(0, [("ask_patient", {"hpo_id": "HP:1"}), ("ask_patient", {"hpo_id": "HP:2"})], None)
    '2 calls to ask_patient should help here.'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from agentenv.core import Task
from agentenv.families import get_family, resolve

OTHER_TOOL = (
    "Next I'll call {tool}.",
    "I'll use {tool} for this step.",
    "The {tool} tool should help here.",
)
"""Lines before one call to a tool the writer has no phrasing of its own for."""
OTHER_TOOL_REPEATED = (
    "Next I'll call {tool} {n} times.",
    "I'll use {tool} for {n} checks at once.",
    "{n} calls to {tool} should help here.",
)
"""Lines before a run of parallel calls to one such tool, so they do not repeat a sentence."""
ANSWER_NO_PLAN = (
    "I can answer this now.",
    "I have enough to give my answer.",
    "Here is my final answer.",
)
"""Answer lines that claim nothing about how the answer was found."""


class ReasoningLines(Protocol):
    """What a ``Family.reasoning`` factory returns: one writer per episode."""

    def turn_line(
        self, step: int, calls: Sequence[tuple[str, Mapping[str, Any]]], previous_output: Any
    ) -> str:
        """The line before one turn's tool calls; ``step`` is the index of the turn's first call."""
        ...

    def answer_line(self, answer: str) -> str:
        """The line before the final answer."""
        ...


class GenericReasoningWriter:
    """Lines any family can use; every choice comes from ``rng``.

    Subclasses name the tools they phrase themselves in :attr:`named_tools`
    and override :meth:`tool_line` and :meth:`answer_line`; other tools keep
    the generic lines.
    """

    named_tools: frozenset[str] = frozenset()
    """Tools that get a line each from :meth:`tool_line`; the rest share generic lines per run."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def _pick(self, options: Sequence[str], **values: Any) -> str:
        return options[int(self.rng.integers(len(options)))].format(**values)

    def tool_line(
        self, step: int, tool: str, arguments: Mapping[str, Any], previous_output: Any
    ) -> str:
        """The line before calling ``tool``, the ``step``-th call of the episode."""
        return self._pick(OTHER_TOOL, tool=tool)

    def turn_line(
        self, step: int, calls: Sequence[tuple[str, Mapping[str, Any]]], previous_output: Any
    ) -> str:
        """The line before one turn's calls (``step`` is the index of its first call).

        Calls to :attr:`named_tools` get a line each; a run of calls to the same
        other tool gets one line, so parallel calls do not repeat a sentence.
        """
        lines: list[str] = []
        i = 0
        while i < len(calls):
            tool, arguments = calls[i]
            if tool in self.named_tools:
                lines.append(self.tool_line(step + i, tool, arguments, previous_output))
                i += 1
                continue
            run = 1
            while i + run < len(calls) and calls[i + run][0] == tool:
                run += 1
            lines.append(
                self._pick(OTHER_TOOL, tool=tool)
                if run == 1
                else self._pick(OTHER_TOOL_REPEATED, tool=tool, n=run)
            )
            i += run
        return " ".join(lines)

    def answer_line(self, answer: str) -> str:
        """The line before the final answer."""
        return self._pick(ANSWER_NO_PLAN)


def writer_for_task(task: Task, rng: np.random.Generator) -> ReasoningLines:
    """The reasoning writer of one episode: the task family's ``Family.reasoning``, else the generic one."""
    factory = get_family(task.family).reasoning
    if factory is None:
        return GenericReasoningWriter(rng)
    return resolve(factory)(task, rng)
