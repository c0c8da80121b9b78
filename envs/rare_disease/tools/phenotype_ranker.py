"""The reference phenotype ranker: Phenomizer-style semantic similarity over the disease universe.

Score (Köhler et al. 2009, "Clinical diagnostics in human genetics with
semantic similarity searches in ontologies", AJHG 85:457; Resnik similarity):
for each patient term ``t`` and disease ``D``,

    sim(t, D) = max over D's annotated terms d of IC(MICA(t, d))
              = max { IC(a) : a ancestor of t, a ancestor of some annotation of D }

and ``score(D)`` is the mean of ``sim(t, D)`` over the patient's terms (one
direction only: patient -> disease). The second line is the one computed: with
``closure(D)`` the union of the ancestors of D's annotations, ``sim(t, D)`` is
the largest IC among ``t``'s ancestors that lie in ``closure(D)``.

Why it is fast (budget: <= 1 ms per case over 8,170 OMIM diseases):

* IC falls as terms get more general, and a general term lies in the closure of
  thousands of diseases. Call a term a *hub* when at least ``hub_min_diseases``
  diseases reach it. Hubs are closed upwards (every ancestor of a hub is a hub),
  and every non-hub ancestor of ``t`` has a higher IC than every hub ancestor.
* For each hub ``h`` the dense vector ``sim(h, .)`` over all diseases is
  precomputed (a few hundred rows of float32). For a patient term ``t`` the hub
  part of ``sim(t, .)`` is the max of the rows of its lowest hub ancestors, and
  the non-hub part overwrites the entries of the few diseases that reach a
  non-hub ancestor, in increasing IC order. Each term costs a handful of
  vector operations instead of one scatter per ancestor over thousands of diseases.
  Measured (2 cores, HPO 2025-01-16, 8,170 diseases, calibrated test patients):
  ~0.12 ms p50 / 0.24 ms mean per ``rank()``; the per-ancestor scatter takes
  ~3x longer (``benchmarks/calibrate_patients.py``). Scores are float32 sums,
  equal to the exact formula to ~1e-6.

Ties: one-directional similarity gives every disease whose profile covers all
the patient's terms the same maximal score, so ties are common (a third of
clean patients tie with other diseases). :meth:`PhenotypeRanker.rank` breaks
them by a fixed rule, in this order:

1. more *exact* matches first: patient terms annotated to the disease itself,
   not only reached through a more specific annotation;
2. then the *likelier presentation* first: the log-likelihood of the case under
   the disease's annotated frequencies, ``sum log f(t)`` over its exactly
   matched annotations plus ``sum log(1 - f(a))`` over its other annotations
   (frequencies as in ``get_disease``: the source value, else the middle of the
   HPO class, unknown 0.5; clipped to [0.01, 0.95]). A disease whose typical
   features are all present, and whose frequent features are not missing, wins;
3. then the smaller profile (the size principle), then the lower id.

Measured on the validation split (``benchmarks/calibrate_patients.py``):
the textbook Marfan triad (HP:0001166, HP:0001083, HP:0002616) ties four
diseases at the top, and Marfan syndrome moves from 4th (smaller profile first,
the v0.1 rule) to 1st; clean top-3 rises from 0.918 to 0.945, the calibrated
patients' top-3 is unchanged (0.434 -> 0.436). "Broader profile first" would
also put Marfan first but drops clean top-3 to 0.777.

Excluded terms (optional): with ``excluded_penalty = w > 0``, each excluded term
``e`` subtracts ``w * IC(e) / n_present`` from every disease whose closure holds
``e`` (the disease is annotated with ``e`` or something more specific). The
Phenomizer itself ignores excluded terms, which is what ``w = 0`` gives.

Example (not run as a doctest: it loads the KB):

    ranker = PhenotypeRanker(load_hpo_kb())
    ranker.rank(["HP:0001166", "HP:0001519", "HP:0001083", "HP:0002616"], k=3)
    # [('OMIM:154700', ...), ...]  Marfan syndrome in the top 3
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache

import numpy as np

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.tools.ranker_precompute import (
    ARRAY_NAMES,
    DEFAULT_HUB_MIN_DISEASES,
    ranker_arrays,
)


def resolve_terms(kb: HpoKnowledgeBase, terms: Iterable[str], what: str = "term") -> list[int]:
    """Map ids (alt and obsolete ids included) to unique term indices, in first-seen order.

    Raises:
        ValueError: an id the KB cannot resolve, naming it.
    """
    out: list[int] = []
    seen: set[int] = set()
    for tid in terms:
        primary = kb.resolve_term(tid)
        if primary is None:
            raise ValueError(
                f"unknown or obsolete HPO {what} {tid!r} (HPO {kb.release}); "
                "map it with kb.resolve_term() or drop it"
            )
        i = kb.graph.index[primary]
        if i not in seen:
            seen.add(i)
            out.append(i)
    return out


class PhenotypeRanker:
    """Rank every disease of a KB's universe by Phenomizer similarity to a patient.

    Args:
        kb: the knowledge base (its universe and IC are used).
        excluded_penalty: weight of the excluded-term penalty (see module doc); 0 ignores them.
        hub_min_diseases: hub threshold (speed/memory trade-off only; scores do not change).
        arrays: what :func:`ranker_arrays` computes from ``kb`` and ``hub_min_diseases``, already built
            (e.g. memory-mapped from the disk cache); computed here when not given.
    """

    def __init__(
        self,
        kb: HpoKnowledgeBase,
        *,
        excluded_penalty: float = 0.0,
        hub_min_diseases: int = DEFAULT_HUB_MIN_DISEASES,
        arrays: dict[str, np.ndarray] | None = None,
    ) -> None:
        if excluded_penalty < 0:
            raise ValueError(f"excluded_penalty must be >= 0, got {excluded_penalty}")
        self.kb = kb
        self.excluded_penalty = float(excluded_penalty)
        if arrays is None:
            arrays = ranker_arrays(kb, hub_min_diseases)
        missing = set(ARRAY_NAMES) - set(arrays)
        if missing:
            raise ValueError(f"ranker arrays lack {sorted(missing)}")
        # Read-only from here on: arrays loaded from the disk cache are memory-mapped files that every
        # process ranking with this KB shares (see envs/rare_disease/tools/ranker_cache.py).
        self._ic32 = arrays["ic32"]
        self._col_idx, self._col_ptr = arrays["col_idx"], arrays["col_ptr"]
        self._is_hub, self._hub_row, self._rows = (
            arrays["is_hub"],
            arrays["hub_row"],
            arrays["rows"],
        )
        self._profile_size = arrays["profile_size"]
        self._direct_idx, self._direct_ptr = arrays["direct_idx"], arrays["direct_ptr"]
        self._all_absent, self._direct_log_ratio = arrays["all_absent"], arrays["direct_log_ratio"]
        self._plans: dict[int, tuple[np.ndarray, list[tuple[np.ndarray, np.float32]]]] = {}

    def _col(self, t: int) -> np.ndarray:
        return self._col_idx[self._col_ptr[t] : self._col_ptr[t + 1]]

    def _plan(self, t: int) -> tuple[np.ndarray, list[tuple[np.ndarray, np.float32]]]:
        """(hub rows to max, [(diseases, IC)] non-hub overwrites in increasing IC) for term t."""
        plan = self._plans.get(t)
        if plan is not None:
            return plan
        graph = self.kb.graph
        anc = graph.ancestors(t)
        if self._is_hub[t]:
            plan = (np.asarray([self._hub_row[t]]), [])
        else:
            non_hub = anc[~self._is_hub[anc]]
            frontier = {
                int(p)
                for n in non_hub.tolist()
                for p in graph.parents(n).tolist()
                if self._is_hub[p]
            }
            rows = np.asarray(sorted(self._hub_row[f] for f in frontier), dtype=np.intp)
            order = non_hub[np.argsort(self._ic32[non_hub], kind="stable")]
            plan = (rows, [(self._col(a), self._ic32[a]) for a in order.tolist()])
        self._plans[t] = plan
        return plan

    def _sum_sim(self, term_idx: Sequence[int]) -> np.ndarray:
        acc = np.zeros(self.kb.n_universe, dtype=np.float32)
        for t in term_idx:
            rows, overwrites = self._plan(t)
            if not overwrites and len(rows) == 1:
                acc += self._rows[rows[0]]
                continue
            if len(rows) == 1:
                sim = self._rows[rows[0]].copy()
            elif len(rows):
                sim = self._rows[rows].max(axis=0)
            else:
                sim = np.zeros(self.kb.n_universe, dtype=np.float32)
            for cols, value in overwrites:
                sim[cols] = value
            acc += sim
        return acc

    def scores(self, terms: Sequence[str], excluded: Sequence[str] = ()) -> np.ndarray:
        """Score of every universe disease (aligned with ``kb.disease_ids``), float64.

        Raises:
            ValueError: no present terms, or an id the KB cannot resolve.
        """
        present = resolve_terms(self.kb, terms)
        if not present:
            raise ValueError("scores() needs at least one present HPO term")
        return self._scores(present, excluded)

    def _scores(self, present: list[int], excluded: Sequence[str]) -> np.ndarray:
        total = self._sum_sim(present).astype(np.float64)
        if self.excluded_penalty and excluded:
            for e in resolve_terms(self.kb, excluded, what="excluded term"):
                total[self._col(e)] -= self.excluded_penalty * float(self.kb.ic[e])
        return total / len(present)

    def rank(
        self, present_terms: Sequence[str], k: int = 10, excluded: Sequence[str] = ()
    ) -> list[tuple[str, float]]:
        """Top-``k`` (disease id, score), best first.

        Equal scores are common (one-directional similarity gives every disease
        whose profile covers all the patient's terms the same, maximal score), so
        ties go to the disease with more exact matches, then to the likelier
        presentation under its annotated frequencies, then to the smaller
        profile, then to the lower id (:meth:`tie_keys`; the module docstring
        says why).

        Raises:
            ValueError: ``k < 1``, no present terms, or an id the KB cannot resolve.
        """
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        present = resolve_terms(self.kb, present_terms)
        if not present:
            raise ValueError("rank() needs at least one present HPO term")
        scores = self._scores(present, excluded)
        top = top_k(scores, k, tiebreak=lambda candidates: self._tie_keys_of(present, candidates))
        ids = self.kb.disease_ids
        return [(ids[i], float(scores[i])) for i in top.tolist()]

    def _tie_keys_of(self, present: list[int], candidates: np.ndarray) -> tuple[np.ndarray, ...]:
        """The tie-break keys (lower first) of the candidate diseases only: a few, not the universe."""
        exact = np.zeros(len(candidates), dtype=np.int32)
        likelihood = self._all_absent[candidates].copy()
        for t in present:
            lo, hi = self._direct_ptr[t], self._direct_ptr[t + 1]
            if lo == hi:
                continue
            annotated = self._direct_idx[lo:hi]  # ascending disease indices
            pos = np.minimum(np.searchsorted(annotated, candidates), hi - lo - 1)
            hit = annotated[pos] == candidates
            exact += hit
            likelihood[hit] += self._direct_log_ratio[lo:hi][pos[hit]]
        return -exact, -likelihood, self._profile_size[candidates]

    def tie_keys(self, terms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Per universe disease: (exact matches of ``terms``, log-likelihood of the presentation).

        Raises:
            ValueError: an id the KB cannot resolve.
        """
        every = np.arange(self.kb.n_universe)
        minus_exact, minus_likelihood, _ = self._tie_keys_of(resolve_terms(self.kb, terms), every)
        return -minus_exact, -minus_likelihood


@lru_cache(maxsize=4)
def reference_ranker(kb: HpoKnowledgeBase) -> PhenotypeRanker:
    """The reference ranker of a KB, built once per process and shared (the env's tools and
    prompt candidates, the simulator's similar diseases, the baseline agent).

    Its arrays come from the disk cache, memory-mapped (:func:`~agentenv.envs.rare_disease.tools.ranker_cache.cached_ranker_arrays`):
    the first process of a home computes them (about 2 s); every later one maps the same file pages, so the
    workers of an async vector env share one copy (each computed its own 21 MB before)."""
    from agentenv.envs.rare_disease.tools.ranker_cache import cached_ranker_arrays

    return PhenotypeRanker(kb, arrays=cached_ranker_arrays(kb, DEFAULT_HUB_MIN_DISEASES))


def top_k(
    scores: np.ndarray,
    k: int,
    tiebreak: np.ndarray
    | Sequence[np.ndarray]
    | Callable[[np.ndarray], Sequence[np.ndarray]]
    | None = None,
) -> np.ndarray:
    """Indices of the ``k`` highest scores, best first.

    Ties go to the lower ``tiebreak`` value (one array, or several compared in
    order: the first decides, the next breaks its ties), then to the lower index.
    A callable gets the candidate indices (every index scoring at least the k-th
    score) and returns their keys, so keys are computed for those alone.

    Example:
        >>> top_k(np.array([0.5, 2.0, 2.0, 1.0]), 3).tolist()
        [1, 2, 3]
        >>> top_k(np.array([0.5, 2.0, 2.0, 1.0]), 2, tiebreak=np.array([0, 9, 4, 0])).tolist()
        [2, 1]
        >>> top_k(np.array([2.0, 2.0, 2.0]), 3, tiebreak=(np.array([0, 0, -1]), np.array([5, 1, 9]))).tolist()
        [2, 1, 0]
    """
    k = min(k, len(scores))
    if k == 0:
        return np.zeros(0, dtype=np.intp)
    kth = np.partition(scores, len(scores) - k)[len(scores) - k]
    candidates = np.flatnonzero(scores >= kth)
    if tiebreak is None:
        breakers: list[np.ndarray] = []
    elif callable(tiebreak):
        # Whether two candidates tie: sorted neighbours, not np.unique, which imports numpy.ma at its first
        # call (6 MB in every process, every async vector env worker included).
        values = np.sort(scores[candidates])
        tied = bool((values[1:] == values[:-1]).any())
        breakers = list(tiebreak(candidates)) if tied else []  # no tie: the keys cannot matter
    elif isinstance(tiebreak, np.ndarray):
        breakers = [tiebreak[candidates]]
    else:
        breakers = [b[candidates] for b in tiebreak]
    # lexsort sorts by the last key first: score, then each breaker in order, then index.
    keys = [candidates, *reversed(breakers)]
    order = np.lexsort((*keys, -scores[candidates]))
    return candidates[order[:k]]
