"""What the reference phenotype ranker precomputes from a KB: its arrays, a pure function of the KB.

Its own module so that :mod:`.phenotype_ranker` (which ranks with the arrays)
and :mod:`.ranker_cache` (which stores them on disk, for
:func:`~agentenv.envs.rare_disease.tools.phenotype_ranker.reference_ranker`)
both import it without importing each other.
"""

from __future__ import annotations

import numpy as np

from agentenv.corpora.hpo.hpoa import FREQUENCY_RANGES, FrequencyClass
from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase

__all__ = ["ARRAY_NAMES", "DEFAULT_HUB_MIN_DISEASES", "annotation_frequencies", "ranker_arrays"]

DEFAULT_HUB_MIN_DISEASES = 200
"""Hub threshold: terms reached by at least this many universe diseases get a precomputed row."""


ARRAY_NAMES = (
    "ic32",
    "col_idx",
    "col_ptr",
    "is_hub",
    "hub_row",
    "rows",
    "profile_size",
    "direct_idx",
    "direct_ptr",
    "all_absent",
    "direct_log_ratio",
)
"""The arrays a :class:`~agentenv.envs.rare_disease.tools.phenotype_ranker.PhenotypeRanker` ranks with, all derived from its KB (see :func:`ranker_arrays`)."""


def ranker_arrays(
    kb: HpoKnowledgeBase, hub_min_diseases: int = DEFAULT_HUB_MIN_DISEASES
) -> dict[str, np.ndarray]:
    """Everything a ranker precomputes from ``kb`` (about 2 s and 21 MB for OMIM): a pure function of the KB
    and the hub threshold, so it can be cached on disk and shared (:mod:`~agentenv.envs.rare_disease.tools.ranker_cache`)."""
    n_terms, n_dis = kb.n_terms, kb.n_universe
    ic32 = kb.ic.astype(np.float32)

    # Term -> diseases whose closure holds the term (transpose of the closure CSR).
    dis_of_entry = np.repeat(np.arange(n_dis, dtype=np.int32), np.diff(kb.closure_indptr))
    order = np.argsort(kb.closure_indices, kind="stable")
    col_idx = dis_of_entry[order]
    col_ptr = np.zeros(n_terms + 1, dtype=np.int64)
    col_ptr[1:] = np.cumsum(np.bincount(kb.closure_indices, minlength=n_terms))

    graph = kb.graph
    is_hub = kb.n_diseases >= max(int(hub_min_diseases), 1)
    hubs = np.flatnonzero(is_hub)
    hub_row = np.full(n_terms, -1, dtype=np.int32)
    hub_row[hubs] = np.arange(len(hubs), dtype=np.int32)
    rows = np.zeros((len(hubs), n_dis), dtype=np.float32)
    # Hubs in ancestor-first order: a term's ancestors are all hubs, so count them to sort.
    depth = np.diff(graph.ancestors_indptr)[hubs]
    for h in hubs[np.argsort(depth, kind="stable")].tolist():
        row = rows[hub_row[h]]
        for p in graph.parents(h).tolist():
            np.maximum(row, rows[hub_row[p]], out=row)
        row[col_idx[col_ptr[h] : col_ptr[h + 1]]] = ic32[h]
    profile_size = np.diff(kb.pheno_indptr)
    # Term -> diseases annotated with exactly that term (transpose of the phenotype CSR), with
    # each annotation's log-likelihood ratio log f - log(1 - f) for the tie-break.
    dis_of_pheno = np.repeat(np.arange(n_dis, dtype=np.int32), profile_size)
    by_term = np.argsort(kb.pheno_terms, kind="stable")
    direct_idx = dis_of_pheno[by_term]
    direct_ptr = np.zeros(n_terms + 1, dtype=np.int64)
    direct_ptr[1:] = np.cumsum(np.bincount(kb.pheno_terms, minlength=n_terms))
    freq = annotation_frequencies(kb)
    all_absent = np.zeros(n_dis)
    nonempty = profile_size > 0
    all_absent[nonempty] = np.add.reduceat(np.log1p(-freq), kb.pheno_indptr[:-1][nonempty])
    direct_log_ratio = (np.log(freq) - np.log1p(-freq))[by_term]
    return {
        "ic32": ic32,
        "col_idx": col_idx,
        "col_ptr": col_ptr,
        "is_hub": is_hub,
        "hub_row": hub_row,
        "rows": rows,
        "profile_size": profile_size,
        "direct_idx": direct_idx,
        "direct_ptr": direct_ptr,
        "all_absent": all_absent,
        "direct_log_ratio": direct_log_ratio,
    }


def annotation_frequencies(kb: HpoKnowledgeBase) -> np.ndarray:
    """Per positive annotation (aligned with ``kb.pheno_terms``), its frequency for the tie-break.

    The source value when there is one, else the middle of the HPO frequency
    class (unknown: 0.5), clipped to [0.01, 0.95] so no log is infinite.
    """
    middle = np.full(len(FrequencyClass), 0.5)
    for cls, (lo, hi) in FREQUENCY_RANGES.items():
        middle[cls] = (lo + hi) / 2
    freq = np.where(
        np.isnan(kb.pheno_value), middle[kb.pheno_class.astype(np.int64)], kb.pheno_value
    )
    return np.clip(freq, 0.01, 0.95)
