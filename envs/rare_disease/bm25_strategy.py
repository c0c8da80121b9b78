"""The ``bm25`` baseline's RareDiseaseDiagnosis strategy: search with the presented findings, answer the top hits.

It is the floor every retrieval-augmented diagnosis policy must clear. It is
the family's ``Family.bm25``; the generic ``bm25`` agent
(:class:`agentenv.baselines.bm25_agent.BM25Agent`) delegates to it.

* ``RareDiseaseDiagnosis-v0``: one ``search_diseases`` call with the labels of
  the presented phenotypes; the answer is the top hits, as many as the prompt
  allows (3 by default).
* ``RareDiseaseDiagnosis-SingleTurn-v0``: the top listed candidates.

It reads only what a policy sees (the observation and ``info``) and is never
handed the task. Everything is deterministic.

Example:
    >>> disease_limit("List up to 5 diseases, most likely first.", None), disease_limit("", 2)
    (5, 2)
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentenv.actions import answer, tool_call
from agentenv.core import Task
from agentenv.evaluation.agents import UnsupportedEnv

_CANDIDATE = re.compile(r"^\s*\d+\.\s+((?:OMIM|ORPHA):\d+)\b", re.MULTILINE)
_LIMIT = re.compile(r"up to (\d+) diseases")
_HPO_LINE = re.compile(r"^-\s+HP:\d+\s+(.*)$")


def presented_findings(prompt: str) -> str:
    """The presented phenotypes as a search query: their labels, or the lay sentence.

    Example:
        >>> presented_findings("Present phenotypes:\\n- HP:0001166 Arachnodactyly\\n- HP:0000545 Myopia\\n\\n"
        ...                    "Excluded phenotypes:\\n- HP:0001250 Seizure")
        'Arachnodactyly Myopia'
    """
    block = prompt.partition("Present phenotypes:\n")[2].partition("\n\n")[0]
    labels = [m.group(1).strip() for line in block.splitlines() if (m := _HPO_LINE.match(line.strip()))]
    if labels:
        return " ".join(labels)
    sentence = re.search(r"The patient presents with (.*?)\.(?:\s|$)", prompt, re.DOTALL)
    return sentence.group(1) if sentence else prompt


def disease_limit(prompt: str, override: int | None) -> int:
    """How many diseases to answer: the override, else the prompt's "up to N diseases", else 3."""
    if override is not None:
        return override
    found = _LIMIT.search(prompt)
    return int(found.group(1)) if found else 3


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
        self.max_diseases: int | None = getattr(getattr(args, "options", None), "max_diseases", None)
        self._single = False
        self._prompt = ""
        self._step = 0

    def reset(self, obs: str, info: Mapping[str, Any], *, task: Task | None = None,
              rng: np.random.Generator | None = None) -> None:
        tools = {t["function"]["name"] for t in info.get("tools") or ()}
        users = [m["content"] for m in info.get("messages", ()) if m.get("role") == "user"]
        self._prompt = users[0] if users else obs
        self._step = 0
        if "search_diseases" in tools:
            self._single = False
        elif not tools and _CANDIDATE.search(self._prompt):
            self._single = True
        else:
            raise UnsupportedEnv(
                "the bm25 agent plays RareDiseaseDiagnosis-v0 (search_diseases) and "
                "RareDiseaseDiagnosis-SingleTurn-v0 (listed candidates); "
                f"this env offers tools {sorted(tools) or 'none'} and its prompt lists no candidates"
            )

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        self._step += 1
        limit = disease_limit(self._prompt, self.max_diseases)
        if self._single:
            return answer(_CANDIDATE.findall(self._prompt)[:limit])
        if self._step == 1:
            return tool_call("search_diseases", query=presented_findings(self._prompt)[:500], k=min(limit, 20))
        results = (_json(obs) or {}).get("results") or []
        return answer([str(r["id"]) for r in results] or ["no diagnosis found"])
