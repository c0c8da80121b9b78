"""The ``phenotype-ranker`` agent: answer the reference ranker's top k for the presented phenotypes.

It is the baseline every rare-disease policy should beat: no reading, no
questions, just Phenomizer-style similarity over the presented HPO terms.

* Multi-turn (``RareDiseaseDiagnosis-v0``): one ``rank_by_phenotypes`` call
  with the presented ids, then the top k of its output.
* Single turn, an env built with ``ranker_tool=False``, or a ``k`` above the
  tool's maximum (20): the same ranker run locally
  (:func:`~agentenv.envs.rare_disease.tools.diagnosis_tools.reference_ranker`). With
  ``--agent-args k=50`` it is the "list 50 diseases" policy of the
  strict/lenient demonstration.

It reads only what the policy may see: the presented ids are the public
``task.public["phenotypes"]`` (they are also in the prompt), and the
universe is ``task.public["universe"]``. It never reads the gold. On a task
without presented phenotypes (another family's env) ``reset`` raises
:class:`~agentenv.evaluation.agents.UnsupportedEnv` naming the envs it plays.

Example:
    >>> PhenotypeRankerAgent(k="5").args.k
    5
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentenv.core import Task
from agentenv.engine.actions import answer, tool_call
from agentenv.evaluation.agents import UnsupportedEnv


@dataclass
class PhenotypeRankerAgentArgs:
    """Knobs of the phenotype-ranker agent (``--agent-args k=3``)."""

    k: int = 3
    """How many diseases to answer (the env's limit is 3 by default)."""

    def __post_init__(self) -> None:
        self.k = int(self.k)
        if self.k < 1:
            raise ValueError(f"k must be >= 1, got {self.k}")


class PhenotypeRankerAgent:
    """Ranks the presented phenotypes once and answers the top k; deterministic."""

    name = "phenotype-ranker"

    def __init__(self, args: PhenotypeRankerAgentArgs | None = None, **kwargs: Any) -> None:
        self.args = args or PhenotypeRankerAgentArgs(**kwargs)
        self._terms: list[str] = []
        self._universe = "omim"
        self._called = False
        self._use_tool = False

    def reset(
        self, obs: str, info: Mapping[str, Any], *, task: Task, rng: np.random.Generator
    ) -> None:
        phenotypes = task.public.get("phenotypes") if task is not None else None
        if not isinstance(phenotypes, (list, tuple)):
            family = getattr(task, "family", None) or "unknown"
            raise UnsupportedEnv(
                f"the phenotype-ranker agent plays only rare-disease envs ({', '.join(supported_env_ids())}): "
                f"it ranks a task's presented HPO phenotypes, and this env's tasks (family {family!r}) have none; "
                "pick another agent (oracle, bm25, random, llm) or a rare-disease env"
            )
        self._terms = list(phenotypes)
        self._universe = str(task.public.get("universe", "omim"))
        schemas = {
            t["function"]["name"]: t["function"]["parameters"] for t in info.get("tools") or ()
        }
        tool = schemas.get("rank_by_phenotypes")
        most = tool["properties"]["k"].get("maximum", self.args.k) if tool is not None else 0
        self._use_tool = tool is not None and self.args.k <= most
        self._called = False

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        if self._use_tool and not self._called:
            self._called = True
            return tool_call("rank_by_phenotypes", hpo_ids=self._terms, k=self.args.k)
        if self._use_tool:
            ids = _ids_from_ranking(obs)
            if ids is not None:
                return answer(ids[: self.args.k])
        return answer(self._rank_locally())

    def _rank_locally(self) -> list[str]:
        from agentenv.corpora.hpo.knowledge_base import load_hpo_kb
        from agentenv.envs.rare_disease.tools.diagnosis_tools import reference_ranker

        ranker = reference_ranker(load_hpo_kb(self._universe))  # type: ignore[arg-type]
        return [did for did, _ in ranker.rank(self._terms, k=self.args.k)]


def supported_env_ids() -> list[str]:
    """The single-agent env ids of the rare-disease family (the envs this agent plays)."""
    try:
        from agentenv.families import get_family

        return [spec.id for spec in get_family("rare_disease").envs]
    except Exception:  # noqa: BLE001 - only a message is at stake
        return ["RareDiseaseDiagnosis-v0", "RareDiseaseDiagnosis-SingleTurn-v0"]


def _ids_from_ranking(text: str) -> list[str] | None:
    """The disease ids of a rank_by_phenotypes output, or None if it is not one."""
    try:
        return [row["id"] for row in json.loads(text)["ranking"]]
    except (ValueError, KeyError, TypeError):
        return None
