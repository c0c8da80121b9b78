"""Per-case statistics of phenotyped patients, the figures the simulator is calibrated to.

Why: a simulated patient can reach a realistic ranker score by an unrealistic
road (many too-general terms instead of unannotated findings), and an agent
trained on it learns the wrong habits. These statistics describe a case term
by term, so simulated and real collections can be compared one figure at a
time. Every figure is a per-case value averaged over cases (a case with 20
terms weighs as much as one with 3).

Definitions (each term of a case is classified against the gold disease's
positive annotations, in this order):

* **exact**: the term is annotated to the disease;
* **ancestor**: a more general term of an annotation (in the disease's closure);
* **descendant**: a more specific term than an annotation;
* **unrelated**: none of these;
* **non-phenotypic**: outside 'Phenotypic abnormality' (HP:0000118), such as
  onset or inheritance terms (counted separately; they are also classified);
* **IC**: the KB's information content of the term in the universe;
* **depth**: the shortest ``is_a`` path from the root HP:0000001 (root 0,
  'Phenotypic abnormality' 1, an organ-system root 2).

:data:`REAL_TARGETS` holds the figures measured on the shipped real cases
(:mod:`~.real_cases`, 536 published patients); :data:`PUBLISHED_SUMMARIES`
the summary figures of two other collections (586 and 849 patients) that were
the targets before real cases were shipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.patients.simulated import Patient
from agentenv.envs.rare_disease.patients.term_sets import in_sorted

STATISTICS: tuple[str, ...] = (
    "median_terms",
    "mean_terms",
    "share_cases_le3_terms",
    "mean_ic",
    "mean_depth",
    "share_exact",
    "share_ancestor",
    "share_descendant",
    "share_unrelated",
    "share_non_phenotypic",
    "mean_excluded",
    "share_cases_with_excluded",
)
"""The statistics, in the order of the calibration table."""

PUBLISHED_SUMMARIES: dict[str, tuple[float, float | None]] = {
    "median_terms": (9.0, 10.0),
    "mean_terms": (10.2, 12.8),
    "share_cases_le3_terms": (0.075, 0.046),
    "mean_ic": (4.57, 5.12),
    "mean_depth": (6.5, 6.3),
    "share_exact": (0.46, 0.39),
    "share_ancestor": (0.05, 0.07),
    "share_descendant": (0.06, 0.05),
    "share_unrelated": (0.43, 0.49),
    "share_non_phenotypic": (0.0, 0.11),
    "mean_excluded": (8.1, None),
    "share_cases_with_excluded": (0.79, None),
}
"""(collection A, collection B) per statistic, as summary figures given to this project before any
real case was shipped (None where B does not report it); kept for comparison. The targets are now
measured on the shipped cases (:data:`REAL_TARGETS`)."""

REAL_CASES: dict[str, float] = {
    "median_terms": 8.0,
    "mean_terms": 9.187,
    "share_cases_le3_terms": 0.0840,
    "mean_ic": 4.421,
    "mean_depth": 6.482,
    "share_exact": 0.5571,
    "share_ancestor": 0.0495,
    "share_descendant": 0.0474,
    "share_unrelated": 0.3460,
    "share_non_phenotypic": 0.0,
    "mean_excluded": 8.215,
    "share_cases_with_excluded": 0.8302,
}
"""Every statistic of the 536 shipped real cases (:mod:`~.real_cases`), as
:func:`case_statistics` measures them (a test recomputes them from the file)."""

REAL_TARGETS: dict[str, tuple[float, float]] = {
    name: (value, value) for name, value in REAL_CASES.items()
}
"""(low, high) per statistic: the shipped real cases' figure (one collection, so low == high)."""

TOLERANCE = 0.15
"""A simulated figure matches when it lies within the real range widened by 15% at each end."""


def within_tolerance(name: str, value: float) -> bool:
    """Is ``value`` inside ``REAL_TARGETS[name]`` widened by :data:`TOLERANCE`?

    Example:
        >>> within_tolerance("mean_terms", 10.0), within_tolerance("mean_terms", 7.2)
        (True, False)
    """
    lo, hi = REAL_TARGETS[name]
    return lo * (1 - TOLERANCE) <= value <= hi * (1 + TOLERANCE)


@dataclass(frozen=True)
class TermKinds:
    """How the terms of one case relate to its disease's annotations (counts)."""

    exact: int
    ancestor: int
    descendant: int
    unrelated: int
    non_phenotypic: int


def classify_terms(kb: HpoKnowledgeBase, disease_id: str, terms: Sequence[str]) -> TermKinds:
    """Count each kind of term of a case (see the module docstring for the order)."""
    d = kb.disease_index[disease_id]
    annotated = kb.phenotype_indices(d)
    annotated_set = set(annotated.tolist())
    closure = kb.closure(d)
    phenotypic = kb.phenotype_mask
    counts = {"exact": 0, "ancestor": 0, "descendant": 0, "unrelated": 0}
    non_phenotypic = 0
    for tid in terms:
        t = kb.graph.index[kb.resolve_term(tid) or tid]
        non_phenotypic += not phenotypic[t]
        if t in annotated_set:
            counts["exact"] += 1
        elif in_sorted(closure, t):
            counts["ancestor"] += 1
        elif np.intersect1d(kb.graph.ancestors(t), annotated, assume_unique=False).size:
            counts["descendant"] += 1
        else:
            counts["unrelated"] += 1
    return TermKinds(**counts, non_phenotypic=non_phenotypic)


def term_depths(kb: HpoKnowledgeBase) -> np.ndarray:
    """Shortest ``is_a`` distance of every term from the root HP:0000001 (unreachable: -1)."""
    return _depths(kb)


@lru_cache(maxsize=4)
def _depths(kb: HpoKnowledgeBase) -> np.ndarray:
    depth = np.full(kb.n_terms, -1, dtype=np.int32)
    frontier = [kb.graph.index["HP:0000001"]]
    depth[frontier[0]] = 0
    level = 0
    while frontier:
        level += 1
        nxt = []
        for t in frontier:
            for c in kb.graph.children(t).tolist():
                if depth[c] < 0:
                    depth[c] = level
                    nxt.append(c)
        frontier = nxt
    return depth


def case_statistics(kb: HpoKnowledgeBase, patients: Sequence[Patient]) -> dict[str, float]:
    """Every statistic of :data:`STATISTICS` for a collection, over each case's present terms.

    A case's terms are all its present findings as reported (visible and hidden),
    which is what a case report lists.

    Raises:
        ValueError: an empty collection.
    """
    if not patients:
        raise ValueError("case_statistics needs at least one patient")
    depth = term_depths(kb)
    n_terms, ic, dep, shares, excluded = [], [], [], [], []
    for p in patients:
        terms = [kb.resolve_term(t) or t for t in p.all_present]
        idx = [kb.graph.index[t] for t in terms]
        kinds = classify_terms(kb, p.disease_id, terms)
        n = max(len(terms), 1)
        n_terms.append(len(terms))
        ic.append(float(np.mean(kb.ic[idx])) if idx else 0.0)
        dep.append(float(np.mean(depth[idx])) if idx else 0.0)
        shares.append(
            (
                kinds.exact / n,
                kinds.ancestor / n,
                kinds.descendant / n,
                kinds.unrelated / n,
                kinds.non_phenotypic / n,
            )
        )
        excluded.append(len(p.excluded))
    s = np.asarray(shares)
    counts = np.asarray(n_terms)
    return {
        "median_terms": float(np.median(counts)),
        "mean_terms": float(counts.mean()),
        "share_cases_le3_terms": float((counts <= 3).mean()),
        "mean_ic": float(np.mean(ic)),
        "mean_depth": float(np.mean(dep)),
        "share_exact": float(s[:, 0].mean()),
        "share_ancestor": float(s[:, 1].mean()),
        "share_descendant": float(s[:, 2].mean()),
        "share_unrelated": float(s[:, 3].mean()),
        "share_non_phenotypic": float(s[:, 4].mean()),
        "mean_excluded": float(np.mean(excluded)),
        "share_cases_with_excluded": float(np.mean(np.asarray(excluded) > 0)),
    }
