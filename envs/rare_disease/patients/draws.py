"""The draws that make a simulated patient look like a published case report.

Why a separate module: the plain sampler (:mod:`patients`) degrades a disease
profile with generic noise; real cases differ in specific ways, measured term
by term (:mod:`case_statistics`), and each way needs its own draw:

* **How many terms.** Real reports list a median of 9-10 terms and rarely 3 or
  fewer. The case's total is drawn from a log-normal (median and spread are
  parameters), and split binomially into disease findings and unrelated ones.
* **Which disease findings.** Annotated phenotypes are drawn without
  replacement with weights equal to their drawn frequencies (a feature seen in
  90% of patients is likelier to be recorded than one seen in 5%).
* **How precisely.** A finding is recorded as annotated, as a more general
  ancestor (imprecision), or as a more specific descendant: clinicians record
  the specific finding ("Ventricular septal defect" where the disease lists
  "Abnormal ventricular septum morphology").
* **Unrelated findings are real findings.** About half of a real case's terms
  are not annotated to its disease at all: features the annotation misses and
  features of the same organ systems. They are drawn so that they do not look
  improbable: part from the annotations of the disease's phenotypically most
  similar diseases (its differential diagnosis, by the reference ranker on the
  disease's own profile), the rest from terms of the organ systems the
  patient's disease findings lie in, weighted by how many diseases list them
  (common findings of that system). Every unrelated term is neither annotated
  to the disease nor an ancestor or descendant of an annotation, nor related to
  the case's other terms, nor a sibling of one of them under a specific parent
  (siblings are often opposites: microcephaly and macrocephaly).
* **Pertinent negatives.** Most real reports list features looked for and
  absent. They come from the differential: the disease's own ``NOT`` /
  frequency-0 annotations first, then annotated features of the disease and of
  its similar diseases that the patient does not have; never a finding, nor an
  ancestor or descendant of one, so "no" answers never contradict "yes" ones.

All draws use the patient's own generator, in a fixed order, so a
(disease, seed) pair always gives the same patient.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.patients.term_sets import ancestors_of, in_sorted
from agentenv.envs.rare_disease.tools.phenotype_ranker import reference_ranker

if TYPE_CHECKING:
    from agentenv.envs.rare_disease.patients.simulated import SamplerParams


@dataclass
class RealisticDraws:
    """KB-derived pools for the realistic draws, built lazily and shared by one sampler."""

    kb: HpoKnowledgeBase
    params: SamplerParams
    _similar: dict[int, np.ndarray] = field(default_factory=dict)

    # -- pools --------------------------------------------------------------------------

    def similar_diseases(self, d: int) -> np.ndarray:
        """Universe indices of the ``params.similar_diseases`` diseases most like ``d`` (itself excluded)."""
        cached = self._similar.get(d)
        if cached is not None:
            return cached
        kb = self.kb
        terms = [kb.graph.ids[t] for t in kb.phenotype_indices(d).tolist()]
        ranked = reference_ranker(kb).rank(terms, k=self.params.similar_diseases + 1)
        out = np.asarray(
            [kb.disease_index[i] for i, _ in ranked if kb.disease_index[i] != d][
                : self.params.similar_diseases
            ],
            dtype=np.int64,
        )
        self._similar[d] = out
        return out

    # -- draws --------------------------------------------------------------------------

    def counts(self, rng: np.random.Generator, profile_size: int | None = None) -> tuple[int, int]:
        """(disease findings wanted, unrelated findings wanted) for one case of a disease with
        ``profile_size`` annotated phenotypes (see :func:`unrelated_share`)."""
        assert self.params.term_count is not None
        median, sigma = self.params.term_count
        total = max(1, int(round(float(rng.lognormal(np.log(median), sigma)))))
        share = unrelated_share(self.params, profile_size)
        unrelated = int(rng.binomial(total, share))
        return max(1, total - unrelated), unrelated

    def disease_findings(
        self, d: int, n: int, probabilities: np.ndarray, rng: np.random.Generator
    ) -> list[int]:
        """``n`` annotated phenotypes without replacement, weighted by their drawn frequencies."""
        terms = self.kb.phenotype_indices(d)
        n = min(n, len(terms))
        weights = np.maximum(probabilities, 1e-6)
        if (
            self.params.common_bias
        ):  # clinicians record the common findings of a disease (see SamplerParams)
            weights = (
                weights * self.kb.n_diseases[terms].astype(np.float64) ** self.params.common_bias
            )
            # ... but never an organ system itself ("Abnormality of the genitourinary system"), which no real
            # case lists and which the bias would otherwise favour most
            weights = np.where(self.kb.too_general[terms], 1e-6, weights)
        # Weighted sampling without replacement (Efraimidis-Spirakis): the n largest u**(1/w).
        keys = rng.random(len(terms)) ** (1.0 / weights)
        chosen = terms[np.argsort(-keys, kind="stable")[:n]]
        return [int(t) for t in chosen]

    def more_specific(self, d: int, t: int, rng: np.random.Generator) -> int:
        """A descendant of ``t`` 1..``imprecision_max_steps`` steps down, as a recorded finding.

        The descendant must not be annotated to the disease (else it would be an
        exact term); ``t`` itself when it has no such child.
        """
        kb = self.kb
        annotated = kb.phenotype_indices(d)
        steps = int(rng.integers(1, self.params.imprecision_max_steps + 1))
        current = t
        for _ in range(steps):
            children = [
                c
                for c in kb.graph.children(current).tolist()
                if kb.phenotype_mask[c] and not in_sorted(annotated, c)
            ]
            if not children:
                break
            current = children[int(rng.integers(len(children)))]
        return current

    def unrelated(self, d: int, n: int, findings: list[int], rng: np.random.Generator) -> list[int]:
        """``n`` unrelated findings: from similar diseases, else the findings' organ systems."""
        if n <= 0:
            return []
        kb = self.kb
        annotated = kb.phenotype_indices(d)
        anchors = np.union1d(annotated, np.asarray(findings, dtype=np.int64))
        closure = np.union1d(kb.closure(d), ancestors_of(kb, findings))
        similar_terms = self._similar_terms(d)
        systems = self._systems_of(findings or annotated.tolist())
        # Siblings are often opposites (microcephaly / macrocephaly, hypotonia / hypertonia):
        # an unrelated finding never shares a specific parent with one of the case's findings.
        finding_parents = {q for f in findings for q in self._specific_parents(f)}
        parents = set(finding_parents)
        picked: list[int] = []
        findings_set = set(findings)
        p = self.params
        for _ in range(60 * n):
            if len(picked) == n:
                break
            clustered = bool(picked) and p.cluster_share > 0 and rng.random() < p.cluster_share
            if clustered:  # a relative of an unrelated finding already drawn: real extra findings come in groups
                t = self._relative(picked[int(rng.integers(len(picked)))], rng)
            elif rng.random() < p.near_miss_share:
                t = self._near_miss(annotated, findings_set, rng)
            elif len(similar_terms) and rng.random() < p.similar_share:
                t = int(similar_terms[rng.integers(len(similar_terms))])
            elif systems:
                terms, cum = _system_pool(kb, systems[int(rng.integers(len(systems)))])
                if not len(terms):
                    continue
                t = int(terms[int(np.searchsorted(cum, rng.random() * cum[-1], side="right"))])
            else:
                continue
            if (
                t < 0
                or kb.too_general[t]
                or in_sorted(closure, t)
                or np.intersect1d(kb.graph.ancestors(t), anchors).size
            ):
                continue
            t_parents = self._specific_parents(t)
            if (finding_parents if clustered else parents).intersection(t_parents):
                continue
            picked.append(t)
            parents.update(t_parents)
            anchors = np.union1d(anchors, [t])
            closure = np.union1d(closure, kb.graph.ancestors(t))
        return picked

    def excluded(
        self, d: int, truth: list[int], reported: list[int], rng: np.random.Generator
    ) -> list[int]:
        """Pertinent negatives from the differential (see the module docstring)."""
        p = self.params
        if p.excluded_probability <= 0 or rng.random() >= p.excluded_probability:
            return []
        n = 1 + int(rng.poisson(max(p.excluded_mean - 1.0, 0.0)))
        kb = self.kb
        present = list(dict.fromkeys(truth + reported))
        present_closure = ancestors_of(kb, present)
        present_arr = np.asarray(present, dtype=np.int64)
        own = kb.excluded_indices(d)
        differential = np.concatenate(
            [kb.phenotype_indices(d)]
            + [kb.phenotype_indices(int(s)) for s in self.similar_diseases(d)]
        )
        candidates = [int(t) for t in own[rng.permutation(len(own))].tolist()] + [
            int(t) for t in differential[rng.permutation(len(differential))].tolist()
        ]
        chosen: list[int] = []
        seen: set[int] = set()
        for t in candidates:
            if len(chosen) == n:
                break
            if t in seen or not kb.phenotype_mask[t] or kb.too_general[t]:
                continue
            seen.add(t)
            if (
                in_sorted(present_closure, t)
                or np.intersect1d(kb.graph.ancestors(t), present_arr).size
            ):
                continue
            chosen.append(t)
        return chosen

    # -- helpers ------------------------------------------------------------------------

    def _near_miss(
        self, annotated: np.ndarray, findings: set[int], rng: np.random.Generator
    ) -> int:
        """A close relative of an annotation the patient does not have, or -1.

        Why: a clinician who records "Abnormal mitral valve morphology" where the
        disease lists "Mitral valve prolapse" writes a near miss, not noise. The
        relative hangs below a common ancestor 1..``near_miss_steps`` steps above
        the annotation whose information content is at least
        :data:`NEAR_MISS_MIN_IC` (a Resnik similarity of 3 or more), and is a
        term some disease lists. The caller rejects it if it is related to the
        disease's annotations or the case's findings.
        """
        free = [int(a) for a in annotated.tolist() if a not in findings]
        if not free:
            return -1
        t = self._relative(free[int(rng.integers(len(free)))], rng)
        return -1 if t < 0 or in_sorted(annotated, t) else t

    def _relative(self, term: int, rng: np.random.Generator) -> int:
        """A listed term below an ancestor of ``term`` 1..``near_miss_steps`` steps up whose information
        content is at least :data:`NEAR_MISS_MIN_IC`, or -1 (the caller checks it is not ``term``'s kin)."""
        kb = self.kb
        current = term
        steps = int(rng.integers(1, self.params.near_miss_steps + 1))
        for _ in range(steps):
            parents = [
                q
                for q in kb.graph.parents(current).tolist()
                if not kb.too_general[q] and kb.ic[q] >= NEAR_MISS_MIN_IC
            ]
            if not parents:
                break
            current = parents[int(rng.integers(len(parents)))]
        if current == term:
            return -1
        pool, cum = _listed_below(kb, current)
        if not len(pool):
            return -1
        return int(pool[int(np.searchsorted(cum, rng.random() * cum[-1], side="right"))])

    def _similar_terms(self, d: int) -> np.ndarray:
        similar = self.similar_diseases(d)
        if not len(similar):
            return np.zeros(0, dtype=np.int64)
        return np.concatenate([self.kb.phenotype_indices(int(s)) for s in similar.tolist()])

    def _specific_parents(self, t: int) -> list[int]:
        """Parents of ``t`` below the organ-system roots (siblings under a root are not opposites)."""
        return [q for q in self.kb.graph.parents(t).tolist() if not self.kb.too_general[q]]

    def _systems_of(self, terms: list[int]) -> list[int]:
        system_of = _organ_system_of(self.kb)
        return sorted({int(system_of[t]) for t in terms if system_of[t] >= 0})


def unrelated_share(params: SamplerParams, profile_size: int | None) -> float:
    """The expected share of unrelated findings in a case of a disease with ``profile_size`` annotations.

    Why it depends on the profile: a case report lists what the clinicians saw,
    whatever the annotation holds, so a thinly annotated disease's case is mostly
    findings its profile lacks, and a richly annotated one's mostly annotated
    findings. On the real cases the exact share rises from 0.29 (fewer than 4
    annotations) to 0.73 (64 or more). The disease findings' share is
    ``1 - params.unrelated_share`` at ``PROFILE_REFERENCE`` annotations, scaled by
    ``(profile_size / PROFILE_REFERENCE) ** params.profile_slope`` and kept in [0.05, 0.95].
    """
    if profile_size is None or params.profile_slope == 0.0:
        return params.unrelated_share
    related = (1.0 - params.unrelated_share) * (
        max(profile_size, 1) / PROFILE_REFERENCE
    ) ** params.profile_slope
    return 1.0 - min(max(related, 0.05), 0.95)


PROFILE_REFERENCE = 30
"""Annotations of a typical published case's disease (the real cases' median is 33)."""

NEAR_MISS_MIN_IC = 3.0
"""A near miss shares an ancestor of at least this information content with an annotation
(Resnik similarity >= 3, as measured on the real cases)."""


@lru_cache(maxsize=8192)
def _listed_below(kb: HpoKnowledgeBase, q: int) -> tuple[np.ndarray, np.ndarray]:
    """(terms, cumulative weights): descendants of ``q`` (itself excluded) that some disease lists, each
    weighted by how many diseases list it (a relative a clinician writes down is a common finding)."""
    below = kb.graph.descendants(q)
    direct = _direct_counts(kb)
    keep = below[(below != q) & (direct[below] > 0) & ~kb.too_general[below]].astype(np.int64)
    return keep, np.cumsum(direct[keep].astype(np.float64))


@lru_cache(maxsize=4)
def _direct_counts(kb: HpoKnowledgeBase) -> np.ndarray:
    """Per term, how many universe diseases list it directly."""
    return np.bincount(kb.pheno_terms, minlength=kb.n_terms)


@lru_cache(maxsize=4)
def _organ_system_of(kb: HpoKnowledgeBase) -> np.ndarray:
    """Per term, the index of one organ-system root above it (the lowest-indexed), or -1."""
    out = np.full(kb.n_terms, -1, dtype=np.int64)
    for root in sorted(kb.graph.index[r] for r in kb.organ_system_roots):
        below = kb.graph.descendants(root)
        free = below[out[below] < 0]
        out[free] = root
    return out


@lru_cache(maxsize=64)
def _system_pool(kb: HpoKnowledgeBase, root: int) -> tuple[np.ndarray, np.ndarray]:
    """(terms, cumulative weights) of the findings under an organ-system root that diseases list,
    each weighted by how many diseases list it."""
    below = kb.graph.descendants(root)
    direct = np.bincount(kb.pheno_terms, minlength=kb.n_terms)
    keep = below[(direct[below] > 0) & ~kb.too_general[below]]
    return keep.astype(np.int64), np.cumsum(direct[keep].astype(np.float64))
