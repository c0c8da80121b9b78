"""The MediaSearch oracle: follows each question's gold tool plan through the real tools.

It proves that every generated question is answerable with the tools: the
answer it gives is read out of the real tool outputs with the plan's
``extract`` rule (:func:`~agentenv.envs.media_search.questions.record.execute_plan_extract`),
never copied from the gold. Questions without a plan (your own questions),
and every question in the single-turn env (no tools to follow a plan with),
get the gold answer directly, since there is nothing to prove.

It is the family's ``Family.oracle``; the generic ``oracle`` agent
(:class:`agentenv.baselines.oracle.OracleAgent`) delegates to it.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from agentenv.core import Task
from agentenv.engine.actions import answer, tool_call
from agentenv.envs.media_search.questions.record import execute_plan_extract
from agentenv.envs.media_search.tools.compact import parse_compact


class OracleChecksOnlyTheGrader(UserWarning):
    """The oracle answered a task without a tool plan with its gold text (see ``agentenv check-tasks``)."""


class MediaSearchOracle:
    """A privileged scripted agent; one tool call per turn, then the extracted answer."""

    name = "oracle"

    def __init__(self) -> None:
        self._steps: list[Mapping[str, Any]] = []
        self._outputs: list[Any] = []
        self._task: Task | None = None
        self._next = 0

    def reset(
        self, obs: str, info: Mapping[str, Any], *, task: Task, rng: np.random.Generator
    ) -> None:
        self._task = task
        plan = getattr(task.case, "plan", None) if info.get("tools") else None
        self._steps = list(plan or [])
        if info.get("tools") and plan is None:
            warnings.warn(
                "oracle: this task has no gold tool plan (a task of your own), so the oracle answers its gold "
                "text: a score of 1.0 checks only that the grader accepts the gold, not that the task can be "
                "solved; run `agentenv check-tasks ENV --tasks FILE` for that",
                OracleChecksOnlyTheGrader,
                stacklevel=2,
            )
        self._outputs = []
        self._next = 0

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        if self._next > 0:
            self._outputs.append(_parsed(self._steps[self._next - 1]["tool"], obs))
        if self._next < len(self._steps):
            step = self._steps[self._next]
            self._next += 1
            return tool_call(step["tool"], **step["arguments"])
        return answer(self._final_answer())

    def _final_answer(self) -> str:
        task = self._task
        assert task is not None, "reset() first"
        extract = getattr(task.case, "extract", None)
        if self._steps and extract is not None:
            found = execute_plan_extract(extract, self._outputs)
            if getattr(task.case, "answer_type", None) == "title":
                return dated_title(found, self._outputs)
            return found
        gold = task.gold
        if not isinstance(gold, Mapping) or "answer" not in gold:
            return str(gold)
        if (
            gold.get("answer_type") == "title"
        ):  # "Title (Year)": read even where several films share the title
            return next(
                (a for a in gold.get("aliases", ()) if str(a).endswith(")")), gold["answer"]
            )
        return gold["answer"]


def dated_title(title: str, outputs: Any) -> str:
    """``Title (Year)`` when a film record in the outputs has this title and a year, else the title.

    Why: a title that several catalog films share ("Walking Tall", 1973 and
    2004) is credited only with its year, and the year is always accepted.

    Example:
        >>> dated_title("Heat", [{"results": [{"title": "Heat", "year": 1995}]}])
        'Heat (1995)'
    """
    stack = [outputs]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            if item.get("title") == title and isinstance(item.get("year"), int):
                return f"{title} ({item['year']})"
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(reversed(item))
    return title


def _parsed(tool: str, text: str) -> Any:
    """A tool output as data: its JSON, or (``compact=True`` envs) its compact lines read back."""
    try:
        return json.loads(text)
    except ValueError:
        return parse_compact(tool, text)
