"""Which diseases a split's simulated patients have: the mix of published cases, or every disease alike.

Why: a uniform draw over the universe gives thinly annotated diseases the same
weight as well-studied ones, so 44% of its golds have fewer than 10
annotations (median 12), while published patients have diseases with a median
of 33. Small profiles suit word matching, so a uniform split ranks agents
differently from real patients (bm25 looked twice as good as it is). The
``published`` mix draws golds with the weight that published cases give each
annotation-count bin; ``uniform`` keeps one case list entry per disease (per
seed), for those who want coverage of the universe.

The weights (:data:`PUBLISHED_WEIGHTS`) are fitted on the shipped real cases
(:mod:`~.real_cases`, the calibration collection): per bin of annotation
count, the bin's share of real cases over its share of universe diseases
(:func:`fit_weights`; a test refits them from the file). A split keeps its
diseases (the split is still by disease) and its size; its cases are drawn
with replacement from its diseases with these weights by a generator seeded
from the split's name, in disease-id order, the k-th case of a disease taking
:func:`~.splits.case_seed` ``(disease, k)``.

Example:
    >>> DISEASE_MIXES
    ('published', 'uniform')
    >>> bin_of(3), bin_of(33), bin_of(500)
    (0, 4, 5)
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.patients.splits import (
    CASES_PER_DISEASE,
    SPLIT_SALT,
    Case,
    CaseList,
    IndexedCases,
    SplitName,
    case_list,
    case_seed,
    split_diseases,
)

DISEASE_MIXES: tuple[str, ...] = ("published", "uniform")
"""Named disease mixes; ``published`` is the default."""
DEFAULT_MIX = "published"

BIN_EDGES: tuple[int, ...] = (0, 4, 8, 16, 32, 64)
"""Lower edges of the annotation-count bins (the last bin is open)."""
PUBLISHED_WEIGHTS: tuple[float, ...] = (0.2184, 0.3184, 0.6414, 1.0483, 2.7937, 6.2099)
"""Per bin, (share of real cases) / (share of OMIM universe diseases), fitted on the 536 shipped
real cases (HPO 2025-01-16): 24, 31, 76, 135, 193 and 77 cases against 1,675, 1,484, 1,806,
1,963, 1,053 and 189 diseases."""


def bin_of(n_annotations: int) -> int:
    """The annotation-count bin of a disease with ``n_annotations`` phenotypes."""
    return int(np.searchsorted(np.asarray(BIN_EDGES), n_annotations, side="right") - 1)


def profile_sizes(kb: HpoKnowledgeBase) -> np.ndarray:
    """Annotated phenotypes per universe disease (``kb.disease_ids`` order)."""
    return np.diff(kb.pheno_indptr)


def fit_weights(kb: HpoKnowledgeBase, golds: Sequence[str]) -> tuple[float, ...]:
    """Per bin, the share of ``golds`` (one entry per case) over the share of universe diseases.

    Raises:
        ValueError: no gold, or a gold outside the universe.
    """
    if not golds:
        raise ValueError("fit_weights needs at least one case")
    sizes = profile_sizes(kb)
    missing = [g for g in golds if g not in kb.disease_index]
    if missing:
        raise ValueError(f"golds outside the {kb.universe!r} universe: {missing[:3]}")
    case_bins = np.bincount(
        [bin_of(int(sizes[kb.disease_index[g]])) for g in golds], minlength=len(BIN_EDGES)
    )
    universe_bins = np.bincount([bin_of(int(n)) for n in sizes], minlength=len(BIN_EDGES))
    share_cases = case_bins / case_bins.sum()
    share_universe = universe_bins / max(universe_bins.sum(), 1)
    return tuple(
        float(c / u) if u > 0 else 0.0 for c, u in zip(share_cases, share_universe, strict=True)
    )


def disease_weights(
    kb: HpoKnowledgeBase, diseases: Sequence[str], weights: Sequence[float] = PUBLISHED_WEIGHTS
) -> np.ndarray:
    """The draw weight of each of ``diseases``, by its annotation-count bin."""
    sizes = profile_sizes(kb)[[kb.disease_index[d] for d in diseases]]
    table = np.asarray(weights, dtype=np.float64)
    # bin_of of every size in one searchsorted: per disease it was 20 ms of a warm make
    return table[np.searchsorted(np.asarray(BIN_EDGES), sizes, side="right") - 1]


class MixedCaseList(IndexedCases):
    """A split's cases drawn with the published mix (see the module docstring); seeds computed on access."""

    def __init__(
        self, kb: HpoKnowledgeBase, split: SplitName, n_cases: int, cases_per_disease: int
    ) -> None:
        diseases = split_diseases(kb, split)
        w = disease_weights(kb, diseases)
        digest = hashlib.sha256(f"{SPLIT_SALT}:mix:published:{split}:{n_cases}".encode()).digest()
        rng = np.random.default_rng(int.from_bytes(digest[:8], "big"))
        picks = np.sort(rng.choice(len(diseases), size=n_cases, p=w / w.sum()))
        first = np.searchsorted(picks, picks, side="left")
        self._diseases = diseases
        self._picks = picks
        self._k = np.arange(n_cases) - first  # the k-th case of its disease
        self._n = cases_per_disease

    @property
    def cases_per_disease(self) -> int:
        """The uniform list's seeds per disease, which sets this list's size."""
        return self._n

    @property
    def mix(self) -> str:
        return "published"

    def __len__(self) -> int:
        return len(self._picks)

    def _case(self, i: int) -> Case:
        disease_id = self._diseases[int(self._picks[i])]
        return Case(disease_id, case_seed(disease_id, int(self._k[i])))


def mixed_case_list(
    kb: HpoKnowledgeBase,
    split: SplitName,
    mix: str = DEFAULT_MIX,
    cases_per_disease: int | None = None,
) -> CaseList | MixedCaseList:
    """The case list of ``split`` under a disease mix: as many cases as the uniform list, drawn by ``mix``.

    Raises:
        ValueError: an unknown mix or split, naming it.
    """
    if mix not in DISEASE_MIXES:
        raise ValueError(f"disease_mix must be one of {list(DISEASE_MIXES)}, got {mix!r}")
    uniform = case_list(kb, split, cases_per_disease)
    if mix == "uniform":
        return uniform
    n = CASES_PER_DISEASE[split] if cases_per_disease is None else cases_per_disease
    return MixedCaseList(kb, split, len(uniform), n)
