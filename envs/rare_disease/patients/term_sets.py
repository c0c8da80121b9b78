"""Two set operations on HPO term indices that the patient sampler, its draws and the case statistics share.

Why their own module: term sets here are sorted ``int`` arrays (closures, ancestor
lists), and membership by binary search is what every consumer needs; one copy
keeps them agreeing.

Example:
    >>> in_sorted(np.array([2, 5, 9]), 5), in_sorted(np.array([2, 5, 9]), 6)
    (True, False)
"""

from __future__ import annotations

import numpy as np

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase


def in_sorted(sorted_terms: np.ndarray, t: int) -> bool:
    """Is term index ``t`` in the ascending array ``sorted_terms``?"""
    pos = int(np.searchsorted(sorted_terms, t))
    return pos < len(sorted_terms) and int(sorted_terms[pos]) == t


def ancestors_of(kb: HpoKnowledgeBase, terms: list[int]) -> np.ndarray:
    """Sorted union of the (reflexive) ancestors of ``terms``."""
    if not terms:
        return np.zeros(0, dtype=np.int32)
    return np.unique(np.concatenate([kb.graph.ancestors(t) for t in terms]))
