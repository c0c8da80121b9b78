"""The default simulated patients look like published case reports, term by term.

The calibration itself (every statistic of the real collections within +/-15%,
and the reference ranker's top-3 in 0.38-0.45) is checked on the validation
split, where it was tuned; the test split's figures are reported by
``benchmarks/calibrate_patients.py`` and the docs, never tuned on.
"""

from __future__ import annotations

import numpy as np
import pytest

from agentenv.corpora.hpo import HpoKnowledgeBase
from agentenv.envs.rare_disease.case_statistics import STATISTICS, case_statistics, within_tolerance
from agentenv.envs.rare_disease.patients import (
    CALIBRATED,
    MULTI_TURN,
    Patient,
    PatientSampler,
    SamplerParams,
    ask,
)
from agentenv.envs.rare_disease.phenotype_ranker import PhenotypeRanker
from agentenv.envs.rare_disease.splits import split_cases


@pytest.fixture(scope="module")
def validation(kb: HpoKnowledgeBase) -> list[Patient]:
    sampler = PatientSampler(kb, CALIBRATED)
    return [sampler.sample_case(c.disease_id, c.seed) for c in split_cases(kb, "validation")]


def test_every_statistic_within_the_real_band(kb: HpoKnowledgeBase, validation: list[Patient]) -> None:
    stats = case_statistics(kb, validation)
    outside = {name: round(stats[name], 3) for name in STATISTICS if not within_tolerance(name, stats[name])}
    assert not outside


def test_reference_ranker_top3_in_the_real_range(
    ranker: PhenotypeRanker, validation: list[Patient]
) -> None:
    hits = [p.disease_id in [d for d, _ in ranker.rank(p.present, k=3)] for p in validation]
    assert 0.38 <= float(np.mean(hits)) <= 0.45


def _related(kb: HpoKnowledgeBase, a: int, b: int) -> bool:
    return a in kb.graph.ancestors(b) or b in kb.graph.ancestors(a)


def test_unrelated_findings_are_real_findings(kb: HpoKnowledgeBase, validation: list[Patient]) -> None:
    """Unannotated findings are terms some disease lists, none tied to the gold's annotations."""
    direct = np.bincount(kb.pheno_terms, minlength=kb.n_terms)
    ic = {"disease": [], "unrelated": []}
    for p in validation[:200]:
        d = kb.disease_index[p.disease_id]
        closure = set(kb.closure(d).tolist())
        annotated = set(kb.phenotype_indices(d).tolist())
        for tid in p.all_present:
            t = kb.graph.index[tid]
            if t in closure or annotated & set(kb.graph.ancestors(t).tolist()):
                ic["disease"].append(kb.ic[t])
                continue
            ic["unrelated"].append(kb.ic[t])
            assert direct[t] > 0 and not kb.too_general[t]
            # never a sibling (often an opposite) of another finding under a specific parent
            specific_parents = {q for q in kb.graph.parents(t).tolist() if not kb.too_general[q]}
            for other in p.findings:
                o = kb.graph.index[other]
                if o != t:
                    assert not specific_parents & set(kb.graph.parents(o).tolist()), (tid, other)
    # Not spottable by looking improbable: as informative, on average, as the disease's own terms.
    assert len(ic["unrelated"]) > 200
    assert abs(np.mean(ic["unrelated"]) - np.mean(ic["disease"])) < 0.6


def test_answers_are_consistent_about_every_finding(kb: HpoKnowledgeBase) -> None:
    sampler = PatientSampler(kb, MULTI_TURN)
    presented = []
    for case in split_cases(kb, "validation")[:60]:
        p = sampler.sample_case(case.disease_id, case.seed)
        presented.append(len(p.present))  # >= 3 before a more general duplicate is dropped
        assert len(p.present) >= min(2, len(p.findings))
        for f in p.findings:  # unannotated and more specific findings included
            assert ask(kb, p, f).answer == "yes"
        for e in p.excluded:
            assert ask(kb, p, e).answer == "no"
            e_i = kb.graph.index[e]
            for f in (*p.findings, *p.present):
                assert not _related(kb, e_i, kb.graph.index[f]), (e, f)
        for h in p.hidden:  # a hidden finding is revealed, precisely, when asked about
            assert h in ask(kb, p, h).revealed
    assert np.mean(presented) >= 5


def test_descendants_are_recorded_findings(kb: HpoKnowledgeBase) -> None:
    """A more specific term is what the patient has: it is a finding, not an imprecise report."""
    sampler = PatientSampler(kb, CALIBRATED.replace(specific=1.0, imprecision=0.0, unrelated_share=0.0))
    seen = 0
    for case in split_cases(kb, "validation")[:80]:
        p = sampler.sample_case(case.disease_id, case.seed)
        d = kb.disease_index[case.disease_id]
        annotated = set(kb.phenotype_indices(d).tolist())
        for tid in p.present:
            t = kb.graph.index[tid]
            if t not in annotated:
                assert annotated & set(kb.graph.ancestors(t).tolist()) and tid in p.findings
                seen += 1
    assert seen > 50


def test_same_case_same_patient_and_params_validated(kb: HpoKnowledgeBase) -> None:
    sampler = PatientSampler(kb, CALIBRATED)
    case = split_cases(kb, "validation")[3]
    assert sampler.sample_case(*case) == PatientSampler(kb, CALIBRATED).sample_case(*case)
    for bad in (
        {"term_count": (0.5, 0.5)},
        {"unrelated_share": 1.5},
        {"imprecision": 0.6, "specific": 0.6},
        {"similar_diseases": 0},
        {"excluded_mean": -1.0},
    ):
        with pytest.raises(ValueError, match="SamplerParams"):
            SamplerParams(**bad)  # type: ignore[arg-type]


def test_results_record_which_patients(kb: HpoKnowledgeBase) -> None:
    """The HPO files' checksum does not change with the sampler, so the patients get their own."""
    import gymnasium as gym

    from agentenv.envs.rare_disease.patients import LEGACY_CALIBRATED, patients_fingerprint

    new = gym.make("agentenv:RareDiseaseDiagnosis-SingleTurn-v0").unwrapped.corpus_checksums
    old = gym.make("agentenv:RareDiseaseDiagnosis-SingleTurn-v0", sampler="legacy_calibrated").unwrapped.corpus_checksums
    assert new["hpo"] == old["hpo"] and new["patients"] != old["patients"]
    assert new["patients"] == patients_fingerprint(kb, CALIBRATED)
    assert old["patients"] == patients_fingerprint(kb, LEGACY_CALIBRATED)
