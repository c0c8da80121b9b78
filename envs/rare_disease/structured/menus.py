"""RareDiseaseDiagnosis menus: rank or search with the presented findings, then answer the top k or one candidate.

The family's ``structured`` part (:data:`MENUS`), which ``agentenv.lessons.structured`` reaches through the registry.

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

import re

from agentenv.engine.actions import answer, tool_call, tool_calls
from agentenv.envs.rare_disease.structured.reading import (
    disease_limit,
    excluded_phenotypes,
    listed_candidates,
    presented_phenotypes,
    presented_query,
    warns_over_limit,
)
from agentenv.lessons.structured.menu import COMMON_FEATURES, Choice, Menu
from agentenv.lessons.structured.reading import json_or_none, squash

TOP_K = (1, 3, 5, 10, 50)
"""The "answer with the top k" entries."""
ANSWER_CANDIDATES = 5
""""Answer with candidate i" entries, i = 1..5."""
TOOL_K = 20
"""Results asked of each tool (the tools' maximum)."""
POOL_CAP = 50
PROFILES = 5
"""Leading candidates whose profiles ``get_disease`` reads (in one turn), among which a question splits."""
RRF_K = 60
"""Reciprocal-rank fusion's constant (the value of Cormack, Clarke and Buettcher, SIGIR 2009)."""
N_TOOLS = 5
"""Tool entries at the head of the ``diagnosis-tools`` menu."""
UNKNOWN_FREQUENCY = 0.5
"""The frequency of a finding in a disease whose profile was not read: no evidence either way."""
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
            chosen = self.pool[j : j + 1]
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
    """Menu of ``RareDiseaseDiagnosis-v0``: rank, search, read the leading profiles, ask the patient; answers
    from either list, their fusion, or the diseases both agree on.

    The features carry the evidence a choice between them needs: how far the two rankings agree (overlap
    of their top 3, 5 and 10, where each list's first disease stands in the other), the score margins at
    the answer cut, and what the last tool returned (the patient's yes, no or not sure). The fused
    ranking is reciprocal-rank fusion of the two lists (constant :data:`RRF_K`, Cormack et al. 2009),
    times each disease's likelihood of the patient's answers (the finding's annotated frequency in its
    profile, :func:`likelihood`).
    """

    name = "diagnosis-tools"
    required_tools = frozenset(
        {"rank_by_phenotypes", "search_diseases", "get_disease", "ask_patient"}
    )
    labels = (
        f"rank_by_phenotypes(presented ids, k={TOOL_K})",
        f"search_diseases(presented labels, k={TOOL_K})",
        f"get_disease(the {PROFILES} leading fused candidates)",
        "ask_patient(the finding that best splits the leading candidates)",
        "ask_patient(the next finding that best splits them)",
        *(f"answer top {k}" for k in TOP_K),
        "answer search top (limit)",
        "answer ranking top (limit)",
        "answer fused top (limit)",
        "answer agreed, then fused (limit)",
        "answer fused top 1",
    )
    feature_names = (
        *COMMON_FEATURES,
        "pool_size",
        "presented",
        "excluded",
        "limit",
        "prompt_warns_over_limit",
        "used_rank",
        "used_search",
        "profiles_read",
        "questions_asked",
        "rank_top_score",
        "rank_top_gap",
        "search_top_score",
        "search_top_gap",
        "rank_cut_margin",
        "search_cut_margin",
        "fused_cut_margin",
        "overlap_top3",
        "overlap_top5",
        "overlap_top10",
        "search_first_in_ranking",
        "ranking_first_in_search",
        "agreed_in_fused_top",
        "last_was_rank",
        "last_was_search",
        "last_was_profiles",
        "last_was_question",
        "last_answer_yes",
        "last_answer_no",
        "last_answer_not_sure",
        "last_returned_nothing",
        "answers_moved_fused_top",
    )

    def _start(self) -> None:
        super()._start()
        self.rank_ids: list[str] = []
        self.search_ids: list[str] = []
        self.profiles: dict[str, dict[str, float]] = {}
        self.asked: list[str] = []
        self.evidence: dict[str, float] = {}
        """Disease -> product of its likelihoods of the patient's answers."""
        self.last_tool = -1
        self.last_answer = ""
        self.last_empty = 0.0
        self.moved = 0.0

    # ------------------------------------------------------------ actions
    def _render(self, index: int) -> Choice:
        label = self.labels[index]
        ids = [hpo for hpo, _ in self.presented][:50]
        if index == 0 and ids:
            return Choice(tool_call("rank_by_phenotypes", hpo_ids=ids, k=TOOL_K), label, "tool")
        if index in (0, 1):  # without HPO ids (presentation="text") ranking falls back to a search
            return Choice(
                tool_call("search_diseases", query=presented_query(self.prompt)[:500], k=TOOL_K),
                label,
                "tool",
            )
        if index == 2:
            leading = self.fused()[:PROFILES] or ["OMIM:000000"]
            return Choice(
                tool_calls(("get_disease", {"disease_id": d}) for d in leading), label, "tool"
            )
        if index in (3, 4):
            finding = self.splitting_finding()
            return Choice(tool_call("ask_patient", hpo_id=finding or "HP:0000118"), label, "tool")
        i = index - N_TOOLS
        if i < len(TOP_K):
            chosen = self.pool[: TOP_K[i]]
        else:
            limit = max(self.limit, 1)
            chosen = [
                self.search_ids,
                self.rank_ids,
                self.fused(),
                self.agreed(),
                self.fused()[:1],
            ][i - len(TOP_K)]
            chosen = chosen[:limit]
        text = answer(chosen) if chosen else answer(NO_DIAGNOSIS)
        return Choice(text, label, "answer", max(len(chosen), 1))

    def fused(self) -> list[str]:
        """The pool ordered by reciprocal-rank fusion of both lists times the patient's answers' likelihood."""
        scores = self._fused_scores()
        return sorted(scores, key=lambda d: (-scores[d], self.pool.index(d)))

    def _fused_scores(self) -> dict[str, float]:
        scores: dict[str, float] = {}
        for ids in (self.rank_ids, self.search_ids):
            for r, d in enumerate(ids):
                scores[d] = scores.get(d, 0.0) + 1.0 / (RRF_K + r + 1)
        return {d: s * self.evidence.get(d, 1.0) for d, s in scores.items()}

    def agreed(self) -> list[str]:
        """Diseases both lists name, in fused order, then the rest of the fused ranking."""
        both = set(self.rank_ids) & set(self.search_ids)
        fused = self.fused()
        return [d for d in fused if d in both] + [d for d in fused if d not in both]

    def splitting_finding(self) -> str | None:
        """The finding, among the leading candidates' profiles, whose annotated frequency differs most between
        them (variance weighted by their fused scores), not presented, excluded or asked already."""
        leading = [d for d in self.fused()[:PROFILES] if d in self.profiles]
        if len(leading) < 2:
            return None
        scores = self._fused_scores()
        total = sum(scores[d] for d in leading) or 1.0
        weights = {d: scores[d] / total for d in leading}
        known = {h for h, _ in self.presented} | {h for h, _ in self.excluded} | set(self.asked)
        best, best_split = None, 0.0
        for finding in sorted({h for d in leading for h in self.profiles[d]} - known):
            p = {d: self.profiles[d].get(finding, 0.0) for d in leading}
            mean = sum(weights[d] * p[d] for d in leading)
            split = sum(weights[d] * (p[d] - mean) ** 2 for d in leading)
            if split > best_split:
                best, best_split = finding, split
        return best

    def _mask(self) -> list[bool]:
        new = [u == 0 for u in self.used]
        has_pool = bool(self.pool)
        can_ask = bool(self.profiles) and self.splitting_finding() is not None
        tools = [
            new[0],
            new[1],
            new[2] and has_pool,
            new[3] and can_ask,
            new[4] and not new[3] and can_ask,
        ]
        answers = [has_pool] * len(TOP_K) + [
            bool(self.search_ids),
            bool(self.rank_ids),
            has_pool,
            bool(self.rank_ids) and bool(self.search_ids),
            has_pool,
        ]
        return tools + answers

    # ------------------------------------------------------------ reading the replies
    def _read(self, index: int, obs: str) -> None:
        self.last_tool = index
        self.last_answer = ""
        self.last_empty = 1.0
        if index == 2:
            self._read_profiles(obs)
            return
        output = json_or_none(obs)
        if not isinstance(output, dict):
            return
        if index in (3, 4):
            self._read_answer(output)
            return
        rows = output.get("ranking") if "ranking" in output else output.get("results")
        rows = [r for r in rows or [] if isinstance(r, dict) and "id" in r]
        scores = [float(r.get("score") or 0.0) for r in rows]
        ids = [str(r["id"]) for r in rows]
        if "ranking" in output:
            self.rank_scores, self.rank_ids = scores, ids
        else:
            self.search_scores, self.search_ids = scores, ids
        self.last_empty = 0.0 if rows else 1.0
        self._add(ids)

    def _read_profiles(self, obs: str) -> None:
        profiles = dict(self.profiles)
        for out in multi_outputs(obs):
            if isinstance(out, dict) and "id" in out and isinstance(out.get("phenotypes"), list):
                profiles[str(out["id"])] = {
                    str(ph["id"]): frequency_value(str(ph.get("frequency", "")))
                    for ph in out["phenotypes"]
                    if isinstance(ph, dict) and "id" in ph
                }
        self.last_empty = 0.0 if len(profiles) > len(self.profiles) else 1.0
        self.profiles = profiles

    def _read_answer(self, output: dict) -> None:
        finding = str(output.get("id", ""))
        reply = str(output.get("answer", ""))
        self.asked = [*self.asked, finding]
        self.last_answer = reply
        self.last_empty = 0.0
        if reply not in ("yes", "no"):
            return
        before = set(self.fused()[: max(self.limit, 1)])
        evidence = dict(self.evidence)
        for d in self.pool:
            # A disease whose profile was not read gets the likelihood of an unknown frequency, as the
            # read ones are kept in [0.1, 0.9]: left at 1.0 it rose past every read candidate at each answer.
            frequency = (
                self.profiles[d].get(finding, 0.0) if d in self.profiles else UNKNOWN_FREQUENCY
            )
            evidence[d] = evidence.get(d, 1.0) * likelihood(frequency, reply == "yes")
        self.evidence = evidence
        after = set(self.fused()[: max(self.limit, 1)])
        self.moved = len(after - before) / max(len(after), 1)

    # ------------------------------------------------------------ features
    def _features(self) -> list[float]:
        def top_gap(scores: list[float], scale: float) -> list[float]:
            top = scores[0] if scores else 0.0
            gap = (scores[0] - scores[1]) / scores[0] if len(scores) > 1 and scores[0] > 0 else 0.0
            return [squash(top, scale), gap]

        cut = max(self.limit, 1)
        fused_scores = self._fused_scores()
        fused = self.fused()
        agreed = set(self.rank_ids) & set(self.search_ids)
        return [
            *self._pool_features(),
            min(float(self.used[0]), 1.0),
            min(float(self.used[1]), 1.0),
            1.0 if self.profiles else 0.0,
            len(self.asked) / 2.0,
            *top_gap(self.rank_scores, 5.0),
            *top_gap(self.search_scores, 10.0),
            cut_margin(self.rank_scores, cut),
            cut_margin(self.search_scores, cut),
            cut_margin([fused_scores[d] for d in fused], cut),
            overlap(self.rank_ids, self.search_ids, 3),
            overlap(self.rank_ids, self.search_ids, 5),
            overlap(self.rank_ids, self.search_ids, 10),
            position(self.search_ids[:1], self.rank_ids),
            position(self.rank_ids[:1], self.search_ids),
            sum(1 for d in fused[:cut] if d in agreed) / cut,
            *(1.0 if self.last_tool == t else 0.0 for t in (0, 1, 2)),
            1.0 if self.last_tool in (3, 4) else 0.0,
            1.0 if self.last_answer == "yes" else 0.0,
            1.0 if self.last_answer == "no" else 0.0,
            1.0 if self.last_answer == "not sure" else 0.0,
            self.last_empty,
            self.moved,
        ]


def frequency_value(text: str) -> float:
    """A profile's frequency text as a probability: its percentage, a range's midpoint, 0.5 when unknown.

    Example:
        >>> frequency_value("frequent (64%)"), frequency_value("very frequent (80-99%)"), frequency_value("frequency unknown")
        (0.64, 0.895, 0.5)
    """
    numbers = [float(n) for n in re.findall(r"(\d+(?:\.\d+)?)%?", text.partition("(")[2])]
    if not numbers:
        return 0.5
    return round(sum(numbers[:2]) / len(numbers[:2]) / 100.0, 4)


def likelihood(frequency: float, present: bool) -> float:
    """How likely a disease makes the patient's answer: its annotated frequency for "yes", the rest for "no",
    kept in [0.1, 0.9] (annotations are incomplete, and patients are not their textbook)."""
    p = frequency if present else 1.0 - frequency
    return min(max(p, 0.1), 0.9)


def cut_margin(scores: list[float], cut: int) -> float:
    """How far the last disease inside an answer of ``cut`` stands above the first outside, relative to the top."""
    if len(scores) <= cut or not scores or scores[0] <= 0:
        return 0.0
    return min(max((scores[cut - 1] - scores[cut]) / scores[0], 0.0), 1.0)


def overlap(a: list[str], b: list[str], k: int) -> float:
    """The share of the top ``k`` of two rankings that they have in common."""
    if not a or not b:
        return 0.0
    return len(set(a[:k]) & set(b[:k])) / k


def position(first: list[str], ranking: list[str]) -> float:
    """``1 / (1 + i)`` for the disease in ``first`` at place ``i`` of ``ranking``; 0 when absent."""
    if not first or first[0] not in ranking:
        return 0.0
    return 1.0 / (1 + ranking.index(first[0]))


def multi_outputs(obs: str) -> list:
    """The JSON outputs of one turn's calls, in order (a turn of several calls shows each under its tool's name)."""
    parts = re.split(r"^\[[a-z_]+\]\n", obs, flags=re.MULTILINE)
    return [json_or_none(part.strip()) for part in parts if part.strip()]


class DiagnosisCandidatesMenu(_DiagnosisMenu):
    """Menu of ``RareDiseaseDiagnosis-SingleTurn-v0``: top-k answers and single candidates from the prompt's list."""

    name = "diagnosis-candidates"
    labels = _DiagnosisMenu._answer_labels
    feature_names = (
        *COMMON_FEATURES,
        "pool_size",
        "presented",
        "excluded",
        "limit",
        "prompt_warns_over_limit",
    )

    def _start(self) -> None:
        super()._start()
        self._add(listed_candidates(self.prompt))

    def _render(self, index: int) -> Choice:
        return self._answer(index, 0)

    def _features(self) -> list[float]:
        return self._pool_features()


MENUS = (DiagnosisToolsMenu, DiagnosisCandidatesMenu)
"""The family's structured menus, the ``Family.structured`` part: the tools menu, then the single-turn one."""
