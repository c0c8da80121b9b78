"""The privileged oracle and the ``bm25`` baseline's strategy, in the harness's Agent protocol. Both read
passages numbered as ``search`` and single-turn prompts show them: ``[1] Peru (PER) is a country in…``."""

import json
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from agentenv.core import Task
from agentenv.engine.actions import answer, tool_call
from capitals.env import Country, accepted_names, normalize

PASSAGE = re.compile(
    r"^\[\d+\] (?P<country>.+) \((?P<id>[A-Z]{3})\) is a country in (?P<continent>.+)\. "
    r"Its capital is (?P<capital>.+)\.$",
    re.MULTILINE,
)


class CapitalsOracle:
    """Proves tasks solvable with the real tools, never copying the gold: it searches the name the question
    gives, must find the case's country in the hits (so 1.0 is a proof), then answers from ``get_country``.
    A row of a task file has no country: it searches the question and takes the first hit with a field
    the grader accepts (``accepted_names``), so 1.0 there proves the answer is found by search."""

    name = "oracle"

    def reset(
        self, obs: str, info: Mapping[str, Any], *, task: Task, rng: np.random.Generator
    ) -> None:
        self.task, self.tools = task, info["tools"]

    def find(self, obs: str) -> tuple[re.Match[str], str] | None:
        """The first passage in ``obs`` (the prompt's or search's) that answers the task, and its field."""
        case = self.task.case
        for m in PASSAGE.finditer(obs):
            if isinstance(case, Country):  # a table task: the case's country, the asked field
                if m["id"] == case.id:
                    return m, self.task.kind
                continue
            for field in ("capital", "country", "continent"):  # a row: a field the grader accepts
                if normalize(m[field]) in accepted_names(self.task):
                    return m, field
        return None

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        found, case = self.find(obs), self.task.case
        if not self.tools:
            return answer(found[0][found[1]] if found else "not in the passages")
        if info["turn"] == 0:
            if not isinstance(case, Country):
                return tool_call("search", query=self.task.prompt[:500])
            return tool_call(
                "search", query=case.country if self.task.kind == "capital" else case.capital
            )
        if info["turn"] == 1:
            if found is None:
                return answer("not found by search")
            self.field = found[1]
            return tool_call("get_country", country=found[0]["id"])
        return answer(json.loads(obs)[self.field])


class CapitalsBM25:
    """The floor: one search with the question (or the single-turn prompt's passages), then the asked field of
    the top passage. It reads only what a policy sees; ``args`` may carry the bm25 agent's ``k``."""

    name = "bm25"

    def __init__(self, args: Any = None) -> None:
        self.k = int(getattr(args, "k", 5))

    def reset(
        self,
        obs: str,
        info: Mapping[str, Any],
        *,
        task: Task | None = None,
        rng: np.random.Generator | None = None,
    ) -> None:
        self.question, self.tools = obs.rpartition("Question: ")[2], info["tools"]

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        if self.tools and info["turn"] == 0:
            return tool_call("search", query=self.question[:500], k=self.k)
        top = PASSAGE.search(
            obs
        )  # the first passage of the search output, or of the single-turn prompt
        asked = (
            self.question.lower()
        )  # the field, from the wording alone: a policy never sees the kind
        field = (
            "continent"
            if "continent" in asked
            else "country"
            if "which country" in asked
            else "capital"
        )
        return answer(top[field] if top else "unknown")
