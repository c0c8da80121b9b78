"""The records of a dialogue: its per-episode state, the checker's verdicts, and chat messages.

Why apart from the env: these are plain data and small pure helpers, so the
AEC machinery in :mod:`agentenv.multiagent.base` reads as the step contract
alone.
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentenv.core import Task
from agentenv.parsing import Answer


class TextObservation(str):
    """A ``str`` that carries the dtype of :class:`~agentenv.spaces.Text` (``<U``).

    Why: PettingZoo's ``api_test`` assumes numpy observations and compares
    ``observation.dtype`` with the space's dtype. This subclass passes that
    check and is a plain ``str`` everywhere else (equality, JSON, pickling).

    Example:
        >>> from agentenv.spaces import Text
        >>> obs = TextObservation("hi")
        >>> obs == "hi", obs.dtype == Text(8).dtype
        (True, True)
    """

    __slots__ = ()
    dtype = np.dtype(str)


@dataclass(frozen=True)
class Judgment:
    """The rule-based verdict on one message of the simulated side.

    ``counts`` holds per-message counts: ``claims`` (statements the checker
    could tie to a fact), ``false_claims``, ``evasions`` (“not sure” about a
    known fact), ``unanswered`` (asked items not addressed), ``leaks``
    (the diagnosis or title named), ``volunteered`` (held-back facts given
    unasked), ``invalid`` (1 when the message could not be read). A message
    is *faithful* when all but ``claims`` are zero.
    """

    counts: Mapping[str, int]
    claims: tuple[Any, ...] = ()

    @property
    def faithful(self) -> bool:
        """No false claim, evasion, unanswered item, leak or volunteered fact."""
        return not any(v for k, v in self.counts.items() if k != "claims")


@dataclass
class Dialogue:
    """Mutable per-episode state; one object, replaced at every ``reset``."""

    task: Task
    messages: dict[str, list[dict[str, Any]]]
    last: dict[str, str]
    log: list[tuple[str, str]] = field(default_factory=list)
    turns: Counter[str] = field(default_factory=Counter)
    invalid: Counter[str] = field(default_factory=Counter)
    judged: Counter[str] = field(default_factory=Counter)
    tool_calls: int = 0
    tool_errors: int = 0
    think_turns: int = 0
    said: int = 0
    latency_ms: float = 0.0
    paid: float = 0.0
    answer: Answer | None = None
    done: bool = False


def choose_task(tasks: Sequence[Task], options: Mapping[str, Any], rng: np.random.Generator, split: str) -> Task:
    """The task pinned by ``options`` (``task``, ``task_id`` or ``index``), else one drawn with ``rng``.

    Unknown option keys are ignored with a warning: PettingZoo's ``api_test``
    passes ``{"options": 1}`` to check that ``reset`` takes options at all.
    """
    known = {"task", "task_id", "index"}
    unknown = sorted(set(options) - known)
    if unknown:
        warnings.warn(f"reset options {unknown} are not used; this env reads {sorted(known)}", stacklevel=4)
    chosen = [k for k in options if k in known]
    if len(chosen) > 1:
        raise ValueError(f"reset options {chosen}: give at most one of 'task', 'task_id', 'index'")
    if "task" in options:
        if not isinstance(options["task"], Task):
            raise TypeError("options['task'] must be a Task of this env's family")
        return options["task"]
    if "task_id" in options:
        for task in tasks:
            if task.id == options["task_id"]:
                return task
        raise KeyError(f"task_id {options['task_id']!r} is not in split {split!r}")
    if "index" in options:
        index = options["index"]
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(tasks):
            raise IndexError(f"index must be an int in [0, {len(tasks)}), got {index!r}")
        return tasks[index]
    return tasks[int(rng.integers(len(tasks)))]


def assistant_message(content: str, reasoning: str | None, calls: Sequence[Any] = (), call_ids: Sequence[str] = ()) -> dict[str, Any]:
    """An OpenAI-format assistant message, with ``reasoning_content`` and ``tool_calls`` when present."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = [
            {"id": call_id, "type": "function",
             "function": {"name": call.tool.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)}}
            for call_id, call in zip(call_ids, calls, strict=True)
        ]
    return message


def lead_counts(d: Dialogue, lead: str, require_think: bool) -> dict[str, float]:
    """The lead's behaviour components: format, tool calls, turns, errors, modelled latency, messages."""
    well_formed = d.answer is not None and d.invalid[lead] == 0
    if require_think:
        well_formed = well_formed and d.think_turns == d.turns[lead]
    return {
        "format": float(well_formed), "tool_calls": float(d.tool_calls), "turns": float(d.turns[lead]),
        "invalid_actions": float(d.invalid[lead]), "tool_errors": float(d.tool_errors),
        "latency_ms": float(d.latency_ms), "messages": float(d.said),
    }


SPEAKER_COUNTS = ("claims", "false_claims", "evasions", "unanswered", "leaks", "volunteered", "contradictions")
"""The simulated side's summed :class:`Judgment` counts, reported at the end."""


def speaker_components(d: Dialogue, agent: str) -> dict[str, float]:
    """The simulated side's end-of-episode components: its messages, the faithful share, summed counts."""
    sent = d.turns[agent]
    out = {"messages": float(sent), "faithful": d.judged["faithful"] / sent if sent else 1.0}
    out.update({k: float(d.judged[k]) for k in SPEAKER_COUNTS})
    claims = d.judged["claims"]
    out["truthfulness"] = 1.0 - d.judged["false_claims"] / claims if claims else 1.0
    out["invalid_actions"] = float(d.invalid[agent])
    return out
