"""RareDiseaseDiagnosis menus: rank or search with the presented findings, then answer the top k or one candidate.

The family's ``structured`` part (:data:`MENUS`), which ``agentenv.structured`` reaches through the registry.

"Answer with the top k" for k in :data:`TOP_K` is on both menus, so that how
many diseases to list is a choice a policy makes, and can learn: under
``strict`` listing more than the limit scores 0; under ``lenient`` it scores
``hit@any``, and a policy learns to list many (reward hacking).

``diagnosis-tools`` (``RareDiseaseDiagnosis-v0``): the candidate pool is the
ranking of ``rank_by_phenotypes`` (on the presented HPO ids), then the hits
of ``search_diseases`` (on their labels) not already in it, at most 40
diseases, since each tool returns at most 20. ``diagnosis-candidates``
(single-turn): the pool is the candidates listed in the prompt (10 by
default; ``gym.make(id, candidates=50)`` lists 50).
"""

from __future__ import annotations

from agentenv.actions import answer, tool_call
from agentenv.envs.rare_disease.structured_reading import (
    disease_limit,
    excluded_phenotypes,
    listed_candidates,
    presented_phenotypes,
    presented_query,
    warns_over_limit,
)
from agentenv.structured.menu import COMMON_FEATURES, Choice, Menu
from agentenv.structured.reading import json_or_none, squash

TOP_K = (1, 3, 5, 10, 50)
"""The "answer with the top k" entries."""
ANSWER_CANDIDATES = 5
""""Answer with candidate i" entries, i = 1..5."""
TOOL_K = 20
"""Results asked of each tool (the tools' maximum)."""
POOL_CAP = 50
NO_DIAGNOSIS = "no diagnosis"
"""Answer text when the pool is empty (graded as one wrong prediction)."""


class _DiagnosisMenu(Menu):
    """Shared state: the prompt's findings and limit, and the ordered candidate pool."""

    _answer_labels = (
        *(f"answer top {k}" for k in TOP_K),
        *(f"answer candidate {i + 1}" for i in range(ANSWER_CANDIDATES)),
    )

    def _start(self) -> None:
        self.presented = presented_phenotypes(self.prompt)
        self.excluded = excluded_phenotypes(self.prompt)
        self.limit = disease_limit(self.prompt)
        self.warned = warns_over_limit(self.prompt)
        self.pool: list[str] = []
        self.rank_scores: list[float] = []
        self.search_scores: list[float] = []

    def _answer(self, index: int, offset: int) -> Choice:
        i = index - offset
        if i < len(TOP_K):
            chosen = self.pool[: TOP_K[i]]
        else:
            j = i - len(TOP_K)
            chosen = self.pool[j: j + 1]
        text = answer(chosen) if chosen else answer(NO_DIAGNOSIS)
        return Choice(text, self.labels[index], "answer", max(len(chosen), 1))

    def _add(self, ids: list[str]) -> None:
        for did in ids:
            if did not in self.pool and len(self.pool) < POOL_CAP:
                self.pool.append(did)

    def _pool_features(self) -> list[float]:
        return [
            len(self.pool) / POOL_CAP,
            min(len(self.presented), 30) / 30.0,
            min(len(self.excluded), 30) / 30.0,
            min(self.limit, 20) / 20.0,
            self.warned,
        ]


class DiagnosisToolsMenu(_DiagnosisMenu):
    """Menu of ``RareDiseaseDiagnosis-v0``: two tool templates, top-k answers and single candidates."""

    name = "diagnosis-tools"
    required_tools = frozenset({"rank_by_phenotypes", "search_diseases"})
    labels = (
        f"rank_by_phenotypes(presented ids, k={TOOL_K})",
        f"search_diseases(presented labels, k={TOOL_K})",
        *_DiagnosisMenu._answer_labels,
    )
    feature_names = (
        *COMMON_FEATURES,
        "pool_size", "presented", "excluded", "limit", "prompt_warns_over_limit",
        "used_rank", "used_search", "rank_top_score", "rank_top_gap", "search_top_score", "search_top_gap",
    )

    def _render(self, index: int) -> Choice:
        ids = [hpo for hpo, _ in self.presented][:50]
        if index == 0 and ids:
            return Choice(tool_call("rank_by_phenotypes", hpo_ids=ids, k=TOOL_K), self.labels[0], "tool")
        if index in (0, 1):  # without HPO ids (presentation="text") ranking falls back to a search
            return Choice(tool_call("search_diseases", query=presented_query(self.prompt)[:500], k=TOOL_K),
                          self.labels[index], "tool")
        return self._answer(index, 2)

    def _read(self, index: int, obs: str) -> None:
        output = json_or_none(obs)
        if not isinstance(output, dict):
            return
        rows = output.get("ranking") if "ranking" in output else output.get("results")
        rows = [r for r in rows or [] if isinstance(r, dict) and "id" in r]
        scores = [float(r.get("score") or 0.0) for r in rows]
        if "ranking" in output:
            self.rank_scores = scores
        else:
            self.search_scores = scores
        self._add([str(r["id"]) for r in rows])

    def _features(self) -> list[float]:
        def top_gap(scores: list[float], scale: float) -> list[float]:
            top = scores[0] if scores else 0.0
            gap = (scores[0] - scores[1]) / scores[0] if len(scores) > 1 and scores[0] > 0 else 0.0
            return [squash(top, scale), gap]

        return [
            *self._pool_features(),
            min(float(self.used[0]), 3.0) / 3.0, min(float(self.used[1]), 3.0) / 3.0,
            *top_gap(self.rank_scores, 5.0), *top_gap(self.search_scores, 10.0),
        ]


class DiagnosisCandidatesMenu(_DiagnosisMenu):
    """Menu of ``RareDiseaseDiagnosis-SingleTurn-v0``: top-k answers and single candidates from the prompt's list."""

    name = "diagnosis-candidates"
    labels = _DiagnosisMenu._answer_labels
    feature_names = (*COMMON_FEATURES, "pool_size", "presented", "excluded", "limit", "prompt_warns_over_limit")

    def _start(self) -> None:
        super()._start()
        self._add(listed_candidates(self.prompt))

    def _render(self, index: int) -> Choice:
        return self._answer(index, 0)

    def _features(self) -> list[float]:
        return self._pool_features()


MENUS = (DiagnosisToolsMenu, DiagnosisCandidatesMenu)
"""The family's structured menus, the ``Family.structured`` part: the tools menu, then the single-turn one."""
