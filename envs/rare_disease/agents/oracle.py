"""The RareDiseaseDiagnosis oracle: reads the gold disease's profile, asks the patient about it, answers the gold id.

It proves the multi-turn task is solvable *through the real tools*: it
searches for the gold disease by name (so that every id it later uses was
shown to it by a tool, which keeps exported SFT data grounded), calls
``get_disease`` on it, asks the patient about up to
:data:`QUESTIONS` of its most frequent annotated findings that were not
presented (one action with parallel ``ask_patient`` calls), and answers the
gold id. In an env without tools (single turn) it answers at once. Its
reward is 1.0 by construction; what the tests check is that every step it
takes is valid (no invalid action, no tool error) and that the answer
resolves to the gold.

It is the family's ``Family.oracle``; the generic ``oracle`` agent
(:class:`agentenv.baselines.oracle.OracleAgent`) delegates to it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from agentenv.core import Task
from agentenv.engine.actions import answer, tool_call, tool_calls

QUESTIONS = 3
"""Findings of the gold disease the oracle asks about."""
FREQUENT = ("obligate", "very frequent", "frequent")
"""Frequency words (as get_disease prints them) of the findings worth asking about first."""


class RareDiseaseOracle:
    """A privileged scripted agent for RareDiseaseDiagnosis (it reads ``task.gold``)."""

    name = "oracle"

    def __init__(self) -> None:
        self._gold: list[str] = []
        self._name = ""
        self._presented: set[str] = set()
        self._stage = "answer"

    def reset(
        self, obs: str, info: Mapping[str, Any], *, task: Task, rng: np.random.Generator
    ) -> None:
        self._gold = list(task.gold["diagnosis"])
        self._name = str(task.gold.get("name") or "")
        self._presented = set(task.public.get("phenotypes", ()))
        names = {t["function"]["name"] for t in info.get("tools") or ()}
        if not {"get_disease", "ask_patient"} <= names:
            self._stage = "answer"
        else:
            self._stage = "search" if self._name and "search_diseases" in names else "profile"

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        if self._stage == "search":
            self._stage = "profile"
            return tool_call("search_diseases", query=self._name[:500], k=20)
        if self._stage == "profile":
            self._stage = "ask"
            return tool_call("get_disease", disease_id=self._gold[0])
        if self._stage == "ask":
            self._stage = "answer"
            questions = self._questions(obs)
            if questions:
                return tool_calls(("ask_patient", {"hpo_id": q}) for q in questions)
        return answer(self._gold[0])

    def _questions(self, profile_text: str) -> list[str]:
        """Up to QUESTIONS unpresented findings, frequent ones first, from the get_disease output."""
        try:
            phenotypes = json.loads(profile_text)["phenotypes"]
        except (ValueError, KeyError, TypeError):
            return []
        fresh = [p for p in phenotypes if p["id"] not in self._presented]
        frequent = [p for p in fresh if p["frequency"].startswith(FREQUENT)]
        rest = [p for p in fresh if p not in frequent]
        return [p["id"] for p in (frequent + rest)[:QUESTIONS]]
