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

:class:`SamplerParams` (the parameters of the plain sampler's steps and of
these draws) lives here too, so that the sampler (:mod:`.simulated`, which
holds the named presets and re-exports it) and the draws share it without
importing each other.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.patients.term_sets import ancestors_of, in_sorted
from agentenv.envs.rare_disease.tools.phenotype_ranker import reference_ranker


@dataclass(frozen=True)
class SamplerParams:
    """How a patient is degraded from its disease profile (see the module docstring for the steps)."""

    imprecision: float = 0.0
    """Probability that a visible finding is reported as one of its ancestors."""
    imprecision_max_steps: int = 2
    """An imprecise finding moves up 1..this many ``is_a`` steps (uniform)."""
    noise: float = 0.0
    """Per finding, the probability of adding one unrelated term."""
    noise_min_diseases: int = 10
    """Noise (and unrelated excluded) terms are drawn from terms directly annotated to at least this many universe diseases."""
    max_findings: int | None = None
    """Cap on the disease-derived findings (uniform subsample); None: no cap."""
    hidden_fraction: float = 0.0
    """Probability that a finding is hidden until asked about (multi-turn)."""
    min_visible: int = 1
    """At least this many findings stay visible (as many as there are, if fewer)."""
    excluded_range: tuple[int, int] = (0, 0)
    """Inclusive range of the number of terms reported absent."""
    excluded_from_annotations: bool = True
    """Prefer the disease's own NOT / frequency-0 annotations as excluded terms."""
    drop_redundant: bool = True
    """Drop visible terms that are ancestors of other visible terms."""
    # -- realistic draws (patient_draws.py); used when term_count is set ------------------
    term_count: tuple[float, float] | None = None
    """(median, sigma) of the log-normal total number of present terms; None: the plain steps above."""
    unrelated_share: float = 0.0
    """With ``term_count``: the expected share of a case's terms unrelated to its disease's annotations."""
    similar_share: float = 0.5
    """Share of the unrelated findings drawn from similar diseases' annotations (the rest: same organ systems)."""
    similar_diseases: int = 10
    """How many of the most similar diseases make up the differential."""
    specific: float = 0.0
    """With ``term_count``: probability that a disease finding is recorded as a more specific descendant."""
    thin_scaling: float = 1.0
    """When a profile has fewer phenotypes than the draw wants, the unrelated count is scaled by
    (available / wanted) to this power: 1 keeps the case's share of unrelated terms, 0 keeps its
    count (a thinly annotated disease still gets a full-length report)."""
    excluded_probability: float = 0.0
    """With ``term_count``: probability that a case lists pertinent negatives at all."""
    excluded_mean: float = 0.0
    """With ``term_count``: mean number of pertinent negatives of a case that lists some (1 + Poisson)."""
    common_bias: float = 0.0
    """With ``term_count``: a disease finding's draw weight is its frequency times (diseases listing
    the term) ** this. Why: published cases record a disease's common findings (intellectual
    disability, seizures) more than its rare hallmarks; on the real cases the exact terms have a
    median of 235 diseases listing them, against 86 for a frequency-only draw."""
    near_miss_share: float = 0.0
    """With ``term_count``: share of the unrelated findings drawn as near misses, close relatives
    (Resnik similarity >= 3) of an annotation the patient does not have."""
    near_miss_steps: int = 2
    """A near miss hangs below an ancestor 1..this many steps above the annotation."""
    cluster_share: float = 0.0
    """With ``term_count``: probability that an unrelated finding is drawn as a close relative of one
    already drawn (on the real cases 3.3% of the pairs of unrelated terms are close relatives,
    against 0.6% for independent draws)."""
    profile_slope: float = 0.0
    """With ``term_count``: how the share of disease findings grows with the disease's annotation
    count (``patient_draws.unrelated_share``); 0 keeps ``unrelated_share`` for every disease."""

    def __post_init__(self) -> None:
        for name in (
            "imprecision",
            "noise",
            "hidden_fraction",
            "unrelated_share",
            "similar_share",
            "specific",
            "excluded_probability",
            "near_miss_share",
            "cluster_share",
        ):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"SamplerParams.{name} must be in [0, 1], got {value}")
        if self.imprecision_max_steps < 1:
            raise ValueError("SamplerParams.imprecision_max_steps must be >= 1")
        if self.max_findings is not None and self.max_findings < 1:
            raise ValueError("SamplerParams.max_findings must be >= 1 or None")
        if self.min_visible < 1:
            raise ValueError("SamplerParams.min_visible must be >= 1")
        if self.imprecision + self.specific > 1.0:
            raise ValueError("SamplerParams.imprecision + SamplerParams.specific must be <= 1")
        if self.term_count is not None:
            median, sigma = self.term_count
            if not (median >= 1 and sigma >= 0):
                raise ValueError(
                    f"SamplerParams.term_count must be (median >= 1, sigma >= 0), got {self.term_count}"
                )
        if self.similar_diseases < 1:
            raise ValueError("SamplerParams.similar_diseases must be >= 1")
        if self.common_bias < 0:
            raise ValueError(f"SamplerParams.common_bias must be >= 0, got {self.common_bias}")
        if self.near_miss_steps < 1:
            raise ValueError("SamplerParams.near_miss_steps must be >= 1")
        if self.excluded_mean < 0:
            raise ValueError("SamplerParams.excluded_mean must be >= 0")
        lo, hi = self.excluded_range
        if not 0 <= lo <= hi:
            raise ValueError(
                f"SamplerParams.excluded_range must be (lo, hi) with 0 <= lo <= hi, got {self.excluded_range}"
            )

    def replace(self, **changes: object) -> SamplerParams:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


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
