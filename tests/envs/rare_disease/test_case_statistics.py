"""Case statistics: how each term of a case relates to the disease's annotations, IC, depth."""

from __future__ import annotations

import pytest

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.patients.case_statistics import (
    REAL_CASES,
    STATISTICS,
    TermKinds,
    case_statistics,
    classify_terms,
    term_depths,
    within_tolerance,
)
from agentenv.envs.rare_disease.patients.simulated import Patient
from agentenv.envs.rare_disease.tasks.real_cases import load_real_patients

MARFAN = "OMIM:154700"


def test_term_kinds(kb: HpoKnowledgeBase) -> None:
    d = kb.disease_index[MARFAN]
    annotated = set(kb.graph.ids[t] for t in kb.phenotype_indices(d).tolist())
    assert "HP:0001166" in annotated  # arachnodactyly
    general = "HP:0001167"  # Abnormal finger morphology, an ancestor of arachnodactyly
    assert general not in annotated and general in kb.ancestors("HP:0001166")
    specific = next(
        c
        for a in sorted(annotated)
        for c in kb.children(a)
        if c not in annotated and not any(c in kb.ancestors(x) for x in annotated if x != c)
    )
    unrelated = "HP:0000365"  # hearing impairment: not a Marfan feature
    assert unrelated not in annotated
    got = classify_terms(kb, MARFAN, ["HP:0001166", general, specific, unrelated, "HP:0000006"])
    # HP:0000006 (autosomal dominant inheritance) is outside 'Phenotypic abnormality': it is
    # counted as non-phenotypic and, since no positive phenotype reaches it, also as unrelated.
    assert got == TermKinds(exact=1, ancestor=1, descendant=1, unrelated=2, non_phenotypic=1)


def test_depths(kb: HpoKnowledgeBase) -> None:
    depth = term_depths(kb)
    assert depth[kb.graph.index["HP:0000001"]] == 0
    assert depth[kb.graph.index["HP:0000118"]] == 1
    assert depth[kb.graph.index["HP:0000478"]] == 2  # Abnormality of the eye, an organ system
    assert (depth[kb.phenotype_mask] >= 1).all()


def test_collection_figures(kb: HpoKnowledgeBase) -> None:
    d = kb.disease_index[MARFAN]
    own = [kb.graph.ids[t] for t in kb.phenotype_indices(d).tolist()[:4]]
    cases = [
        Patient(MARFAN, present=tuple(own[:2]), excluded=("HP:0000365",)),
        Patient(MARFAN, present=tuple(own), hidden=("HP:0000365",)),
    ]
    s = case_statistics(kb, cases)
    assert set(s) == set(STATISTICS)
    assert s["mean_terms"] == 3.5 and s["median_terms"] == 3.5 and s["share_cases_le3_terms"] == 0.5
    assert s["share_exact"] == pytest.approx((1.0 + 4 / 5) / 2)  # per case, then averaged
    assert s["share_unrelated"] == pytest.approx((0.0 + 1 / 5) / 2)
    assert s["mean_excluded"] == 0.5 and s["share_cases_with_excluded"] == 0.5
    with pytest.raises(ValueError, match="at least one patient"):
        case_statistics(kb, [])


def test_tolerance_band() -> None:
    real = REAL_CASES["share_unrelated"]
    assert within_tolerance("share_unrelated", real * 0.86) and within_tolerance(
        "share_unrelated", real * 1.14
    )
    assert not within_tolerance("share_unrelated", real * 0.84)
    assert not within_tolerance("share_unrelated", real * 1.16)
    assert within_tolerance("share_non_phenotypic", 0.0)


def test_targets_are_the_shipped_real_cases(kb: HpoKnowledgeBase) -> None:
    """The targets are measured on the real cases the package ships, not copied from a summary."""
    measured = case_statistics(kb, load_real_patients(kb))
    assert set(REAL_CASES) == set(STATISTICS)
    for name in STATISTICS:
        assert measured[name] == pytest.approx(REAL_CASES[name], abs=5e-4), name
