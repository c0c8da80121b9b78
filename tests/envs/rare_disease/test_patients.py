"""Simulated patients: determinism, frequency sampling, imprecision, noise, excluded, hidden, ask()."""

from __future__ import annotations

import random

import numpy as np
import pytest

from agentenv.corpora.hpo.hpoa import FrequencyClass
from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.patients.simulated import (
    CALIBRATED,
    CLEAN,
    MULTI_TURN,
    PRESETS,
    Patient,
    PatientSampler,
    SamplerParams,
    ask,
)

DISEASES = ("OMIM:154700", "OMIM:117550", "OMIM:619340", "OMIM:101000", "OMIM:300624")


def _anc(kb: HpoKnowledgeBase, tid: str) -> set[str]:
    return set(kb.ancestors(tid))


def test_same_seed_same_patient(kb: HpoKnowledgeBase) -> None:
    sampler = PatientSampler(kb, MULTI_TURN.replace(excluded_range=(1, 3)))
    for d in DISEASES:
        a, b = sampler.sample_case(d, 123), PatientSampler(kb, sampler.params).sample_case(d, 123)
        assert a == b and a.seed == 123 and a.disease_id == d
    patients = {sampler.sample_case("OMIM:154700", s) for s in range(20)}
    assert len(patients) == 20  # different seeds, different patients


def test_sample_draws_its_seed_from_the_generator(kb: HpoKnowledgeBase) -> None:
    sampler = PatientSampler(kb, CALIBRATED)
    # The legacy global state is read on purpose: the sampler must leave it untouched.
    np_state, py_state = np.random.get_state()[1].copy(), random.getstate()  # noqa: NPY002
    a = sampler.sample("OMIM:154700", np.random.default_rng(5))
    b = sampler.sample("OMIM:154700", np.random.default_rng(5))
    assert a == b and a.seed is not None
    assert a == sampler.sample_case("OMIM:154700", a.seed)
    assert (np.random.get_state()[1] == np_state).all()  # noqa: NPY002
    assert random.getstate() == py_state


def test_clean_patients_are_subsets_of_the_profile(kb: HpoKnowledgeBase) -> None:
    sampler = PatientSampler(kb, CLEAN.replace(drop_redundant=False))
    for d in DISEASES:
        profile = {a.term_id: a for a in kb.disease(d).phenotypes}
        obligate = {t for t, a in profile.items() if a.frequency_class == FrequencyClass.OBLIGATE}
        for seed in range(10):
            p = sampler.sample_case(d, seed)
            assert p.present and set(p.present) <= set(profile)
            assert obligate <= set(p.present)
            assert not p.hidden and not p.excluded
            assert sorted(p.findings) == sorted(p.present)


def test_inclusion_probabilities(kb: HpoKnowledgeBase) -> None:
    sampler = PatientSampler(kb, CLEAN)
    d = kb.disease_index["OMIM:117550"]
    lo, hi = kb.pheno_indptr[d], kb.pheno_indptr[d + 1]
    cls, value = kb.pheno_class[lo:hi], kb.pheno_value[lo:hi]
    for seed in range(20):
        p = sampler.inclusion_probabilities(d, np.random.default_rng(seed))
        numeric = ~np.isnan(value)
        assert np.allclose(p[numeric], value[numeric])
        unknown = cls == FrequencyClass.UNKNOWN
        assert ((p[unknown] >= 0.05) & (p[unknown] <= 0.79)).all()
    # Frequencies show up as rates: an obligate term always, the others sometimes.
    counts = {}
    for seed in range(200):
        for t in sampler.sample_case("OMIM:117550", seed).present:
            counts[t] = counts.get(t, 0) + 1
    assert counts["HP:0000028"] == 200  # obligate
    assert 40 < counts["HP:0000307"] < 160  # 1/2 of patients


def test_never_empty(kb: HpoKnowledgeBase) -> None:
    sampler = PatientSampler(kb, CLEAN)
    uncommon = (FrequencyClass.OCCASIONAL, FrequencyClass.VERY_RARE)
    rare_only = [
        kb.disease_ids[d]
        for d in range(kb.n_universe)
        if np.isin(kb.pheno_class[kb.pheno_indptr[d] : kb.pheno_indptr[d + 1]], uncommon).all()
    ]
    assert rare_only  # there are profiles made of occasional and very rare features only
    for d in rare_only[:20]:
        for seed in range(5):  # most draws of such a profile come out empty and are redrawn
            assert sampler.sample_case(d, seed).present


def test_imprecision_stays_below_the_organ_system_roots(kb: HpoKnowledgeBase) -> None:
    # (305 OMIM annotations are to organ-system roots themselves; those stay as curated.)
    sampler = PatientSampler(
        kb, SamplerParams(imprecision=1.0, imprecision_max_steps=6, drop_redundant=False)
    )
    moved = 0
    for d in kb.disease_ids[::400]:
        for seed in range(5):
            p = sampler.sample_case(d, seed)
            for t in set(p.present) - set(p.findings):  # reported as an ancestor
                assert not kb.too_general[kb.term_index(t)], t
                assert any(t in _anc(kb, f) for f in p.findings)
                moved += 1
    assert moved > 50


def test_noise_terms_are_unrelated(kb: HpoKnowledgeBase) -> None:
    sampler = PatientSampler(kb, SamplerParams(noise=1.0))
    pool = set(sampler.noise_pool.tolist())
    n_noise = 0
    for d in DISEASES:
        profile = {a.term_id for a in kb.disease(d).phenotypes}
        closure = {kb.graph.ids[t] for t in kb.closure(kb.disease_index[d]).tolist()}
        for seed in range(10):
            p = sampler.sample_case(d, seed)
            noise = [t for t in p.findings if t not in profile]
            n_noise += len(noise)
            for t in noise:
                assert kb.term_index(t) in pool
                assert t not in closure  # not an ancestor of the disease's terms
                assert not (_anc(kb, t) & profile)  # not a descendant of them either
            for a in noise:
                for b in noise:
                    assert a == b or a not in _anc(kb, b)
    assert n_noise > 100


def test_excluded_terms(kb: HpoKnowledgeBase) -> None:
    sampler = PatientSampler(kb, SamplerParams(excluded_range=(2, 4), noise=0.3))
    known = set(kb.disease("OMIM:101000").excluded)
    for d in DISEASES:
        for seed in range(10):
            p = sampler.sample_case(d, seed)
            assert 2 <= len(p.excluded) <= 4
            findings_anc = set().union(*(_anc(kb, f) for f in p.findings))
            assert not set(p.excluded) & findings_anc
    p = sampler.sample_case("OMIM:101000", 0)
    assert known & set(p.excluded)  # the disease's own NOT annotations come first


def test_hidden_findings(kb: HpoKnowledgeBase) -> None:
    sampler = PatientSampler(
        kb, SamplerParams(hidden_fraction=1.0, min_visible=2, drop_redundant=False)
    )
    for seed in range(10):
        p = sampler.sample_case("OMIM:154700", seed)
        assert len(p.present) == min(2, len(p.findings))
        assert set(p.hidden) <= set(p.findings) and not set(p.hidden) & set(p.present)
        assert sorted(p.all_present) == sorted(p.findings)


def test_ask(kb: HpoKnowledgeBase) -> None:
    p = Patient(
        "OMIM:154700",
        present=("HP:0001166",),
        hidden=("HP:0001083",),
        excluded=("HP:0001250",),
        findings=("HP:0001166", "HP:0001083"),
    )
    hidden = ask(kb, p, "HP:0001083")  # Ectopia lentis
    assert hidden.answer == "yes" and hidden.revealed == ("HP:0001083",)
    general = ask(kb, p, kb.parents("HP:0001083")[0])
    assert general.answer == "yes" and general.revealed == ("HP:0001083",)
    eye = ask(kb, p, "HP:0000478")  # Abnormality of the eye: an organ-system root
    assert eye.answer == "yes" and eye.revealed == ()
    assert ask(kb, p, "HP:0001166").revealed == ()  # already visible
    assert ask(kb, p, "HP:0001250").answer == "no"  # excluded
    assert ask(kb, p, "HP:0007359").answer == "no"  # Focal-onset seizure: below an excluded term
    assert ask(kb, p, "HP:0004322").answer == "no"  # closed world
    imported = Patient("OMIM:154700", present=("HP:0001166",), closed_world=False)
    assert ask(kb, imported, "HP:0004322").answer == "unknown"
    assert ask(kb, imported, "HP:0001238").answer == "yes"  # Slender finger, above Arachnodactyly
    assert ask(kb, p, "HP:0001275").term_id == "HP:0001250"  # alt ids resolve
    with pytest.raises(ValueError, match="HP:9999999"):
        ask(kb, p, "HP:9999999")


def test_params_validation_and_presets() -> None:
    assert set(PRESETS) >= {"clean", "imprecise", "noisy", "calibrated"}
    assert PRESETS["calibrated"] is CALIBRATED
    for bad in (
        {"imprecision": 1.5},
        {"noise": -0.1},
        {"hidden_fraction": 2.0},
        {"imprecision_max_steps": 0},
        {"max_findings": 0},
        {"min_visible": 0},
        {"excluded_range": (3, 1)},
    ):
        with pytest.raises(ValueError, match="SamplerParams"):
            SamplerParams(**bad)  # type: ignore[arg-type]


def test_unknown_disease(kb: HpoKnowledgeBase) -> None:
    with pytest.raises(KeyError, match="not a disease"):
        PatientSampler(kb).sample_case("ORPHA:558", 0)
