"""The ``bm25`` baseline's RareDiseaseDiagnosis strategy: search with the presented findings, answer the top hits.

It is the floor every retrieval-augmented diagnosis policy must clear. It is
the family's ``Family.bm25``; the generic ``bm25`` agent
(:class:`agentenv.baselines.bm25_agent.BM25Agent`) delegates to it.

* ``RareDiseaseDiagnosis-v0``: one ``search_diseases`` call with the labels of
  the presented phenotypes; the answer is the top hits, as many as the prompt
  allows (3 by default).
* ``RareDiseaseDiagnosis-SingleTurn-v0``: the top listed candidates.

It reads only what a policy sees (the observation and ``info``) and is never
handed the task; the prompt through the family's readers
(:mod:`~agentenv.envs.rare_disease.structured.reading`), the ones its
structured menus use. Everything is deterministic.

Example:
    >>> prompt = "Candidates:\\n 1. OMIM:100100 A\\n 2. ORPHA:2 B\\n 3. OMIM:3 C\\nList up to 2 diseases."
    >>> strategy = RareDiseaseBM25()
    >>> strategy.reset(prompt, {"tools": [], "messages": [{"role": "user", "content": prompt}]})
    >>> strategy.act("", {})
    '<answer>OMIM:100100\\nORPHA:2</answer>'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentenv.core import Task
from agentenv.engine.actions import answer, tool_call
from agentenv.envs.rare_disease.structured.reading import (
    disease_limit,
    listed_candidates,
    presented_query,
)
from agentenv.evaluation.agents import UnsupportedEnv


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


@dataclass
class RareDiseaseBM25Options:
    """The family's own ``--agent-args`` of the bm25 agent (``--agent-args max_diseases=5``)."""

    max_diseases: int | None = None
    """How many diseases to answer; ``None`` reads the limit from the prompt (3 by default)."""

    def __post_init__(self) -> None:
        if self.max_diseases is not None and self.max_diseases < 1:
            raise ValueError(f"max_diseases must be >= 1, got {self.max_diseases}")


class RareDiseaseBM25:
    """One disease search (or the listed candidates), then the top hits; see the module docstring.

    ``args`` are the bm25 agent's strategy args; only ``args.options.max_diseases``
    (:class:`RareDiseaseBM25Options`; ``None``: read the limit from the prompt) is read.
    """

    name = "bm25"
    options = RareDiseaseBM25Options
    """The options this strategy adds to the bm25 agent's ``--agent-args``."""

    def __init__(self, args: Any = None) -> None:
        self.max_diseases: int | None = getattr(
            getattr(args, "options", None), "max_diseases", None
        )
        self._single = False
        self._prompt = ""
        self._step = 0

    def reset(
        self,
        obs: str,
        info: Mapping[str, Any],
        *,
        task: Task | None = None,
        rng: np.random.Generator | None = None,
    ) -> None:
        tools = {t["function"]["name"] for t in info.get("tools") or ()}
        users = [m["content"] for m in info.get("messages", ()) if m.get("role") == "user"]
        self._prompt = users[0] if users else obs
        self._step = 0
        if "search_diseases" in tools:
            self._single = False
        elif not tools and listed_candidates(self._prompt):
            self._single = True
        else:
            raise UnsupportedEnv(
                "the bm25 agent plays RareDiseaseDiagnosis-v0 (search_diseases) and "
                "RareDiseaseDiagnosis-SingleTurn-v0 (listed candidates); "
                f"this env offers tools {sorted(tools) or 'none'} and its prompt lists no candidates"
            )

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        self._step += 1
        limit = disease_limit(self._prompt) if self.max_diseases is None else self.max_diseases
        if self._single:
            return answer(listed_candidates(self._prompt)[:limit])
        if self._step == 1:
            return tool_call(
                "search_diseases", query=presented_query(self._prompt)[:500], k=min(limit, 20)
            )
        results = (_json(obs) or {}).get("results") or []
        return answer([str(r["id"]) for r in results] or ["no diagnosis found"])
