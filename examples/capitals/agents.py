"""The privileged oracle and the ``bm25`` baseline's strategy, in the harness's Agent protocol. Both read
passages numbered as ``search`` and single-turn prompts show them: ``[1] Peru (PER) is a country in…``."""

import json
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from agentenv.core import Task
from agentenv.engine.actions import answer, tool_call

PASSAGE = re.compile(
    r"^\[\d+\] (?P<country>.+) \((?P<id>[A-Z]{3})\) is a country in (?P<continent>.+)\. "
    r"Its capital is (?P<capital>.+)\.$",
    re.MULTILINE,
)


class CapitalsOracle:
    """Proves tasks solvable with the real tools, never copying the gold: it searches the name the question
    gives, must find the case's country in the hits (so 1.0 is a proof), then answers from ``get_country``."""

    name = "oracle"

    def reset(
        self, obs: str, info: Mapping[str, Any], *, task: Task, rng: np.random.Generator
    ) -> None:
        self.case, self.field, self.tools = task.case, task.kind, info["tools"]

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        read = [
            m[self.field] for m in PASSAGE.finditer(obs) if m["id"] == self.case.id
        ]  # prompt or search output
        if not self.tools:
            return answer(read[0] if read else "not in the passages")
        if info["turn"] == 0:
            return tool_call(
                "search", query=self.case.country if self.field == "capital" else self.case.capital
            )
        if info["turn"] == 1:
            return (
                tool_call("get_country", country=self.case.id)
                if read
                else answer("not found by search")
            )
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
