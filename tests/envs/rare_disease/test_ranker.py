"""The reference Phenomizer ranker: exactness against a naive implementation, behaviour, errors."""

from __future__ import annotations

import numpy as np
import pytest

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.patients.simulated import CALIBRATED, PatientSampler
from agentenv.envs.rare_disease.tools.phenotype_ranker import PhenotypeRanker, top_k


def naive_score(kb: HpoKnowledgeBase, patient: list[int], d: int) -> float:
    """Köhler et al. 2009, literally: mean over patient terms of max over annotations of IC(MICA)."""
    total = 0.0
    for t in patient:
        anc_t = set(kb.graph.ancestors(t).tolist())
        best = 0.0
        for a in kb.phenotype_indices(d).tolist():
            common = anc_t.intersection(kb.graph.ancestors(a).tolist())
            best = max(best, max(kb.ic[c] for c in common))
        total += best
    return total / len(patient)


def test_vectorised_equals_naive(kb: HpoKnowledgeBase, ranker: PhenotypeRanker) -> None:
    rng = np.random.default_rng(7)
    sampler = PatientSampler(kb, CALIBRATED)
    for case in range(6):
        disease = kb.disease_ids[int(rng.integers(kb.n_universe))]
        patient = sampler.sample_case(disease, case)
        terms = [kb.term_index(t) for t in patient.present]
        scores = ranker.scores(patient.present)
        sample = np.concatenate(
            [[kb.disease_index[disease]], rng.choice(kb.n_universe, 40, replace=False)]
        )
        for d in sample.tolist():
            assert scores[d] == pytest.approx(naive_score(kb, terms, d), abs=1e-5)


def test_hub_threshold_changes_speed_not_scores(
    kb: HpoKnowledgeBase, ranker: PhenotypeRanker
) -> None:
    other = PhenotypeRanker(kb, hub_min_diseases=kb.n_universe + 1)  # no hubs at all
    few = PhenotypeRanker(kb, hub_min_diseases=20)
    for terms in (
        ["HP:0001166", "HP:0001519", "HP:0000545"],
        ["HP:0001250"],
        ["HP:0000118", "HP:0004322"],
    ):
        base = ranker.scores(terms)
        assert np.allclose(other.scores(terms), base, atol=1e-5)
        assert np.allclose(few.scores(terms), base, atol=1e-5)


def test_full_profiles_rank_their_disease_first(
    kb: HpoKnowledgeBase, ranker: PhenotypeRanker
) -> None:
    rng = np.random.default_rng(0)
    diseases = rng.choice(kb.n_universe, 200, replace=False).tolist()
    first = 0
    for d in diseases:
        terms = [kb.graph.ids[t] for t in kb.phenotype_indices(d).tolist()]
        top = ranker.rank(terms, k=3)
        first += top[0][0] == kb.disease_ids[d]
    assert first / len(diseases) >= 0.9  # 0.94 on 400 diseases; misses are identical profiles


def test_marfan(ranker: PhenotypeRanker) -> None:
    # Arachnodactyly, disproportionate tall stature, ectopia lentis, aortic root aneurysm
    top = ranker.rank(["HP:0001166", "HP:0001519", "HP:0001083", "HP:0002616"], k=10)
    assert "OMIM:154700" in [d for d, _ in top[:3]]
    scores = [s for _, s in top]
    assert scores == sorted(scores, reverse=True) and len(top) == 10


def test_score_properties(kb: HpoKnowledgeBase, ranker: PhenotypeRanker) -> None:
    s = ranker.scores(["HP:0001250"])
    assert s.shape == (kb.n_universe,) and s.dtype == np.float64
    assert s.min() >= 0 and s.max() == pytest.approx(kb.information_content("HP:0001250"))
    assert np.allclose(ranker.scores(["HP:0001275"]), s)  # an alt id is the same term
    assert np.allclose(ranker.scores(["HP:0001250", "HP:0001250"]), s)  # duplicates count once
    assert np.allclose(ranker.scores(["HP:0000001"]), 0.0)


def test_ties_exact_matches_then_likelier_presentation_then_smaller_profile(
    kb: HpoKnowledgeBase, ranker: PhenotypeRanker
) -> None:
    # The textbook Marfan triad ties four diseases at the top score; Marfan syndrome lists all
    # three features (3 exact matches, frequently) and must come first (it came 4th under v0.1's
    # smaller-profile-first rule).
    triad = ["HP:0001166", "HP:0001083", "HP:0002616"]
    top = ranker.rank(triad, k=4)
    assert top[0][0] == "OMIM:154700" and len({s for _, s in top}) == 1
    exact, likelihood = ranker.tie_keys(triad)
    order = [kb.disease_index[d] for d, _ in top]
    keys = [(-int(exact[i]), -float(likelihood[i]), len(kb.phenotype_indices(i))) for i in order]
    assert keys == sorted(keys)
    assert exact[kb.disease_index["OMIM:609008"]] == 2  # tied on score, but one match is not exact
    # A single generic term ties hundreds of diseases: the order follows the keys exactly.
    seizure = ranker.rank(["HP:0001250"], k=50)
    best = [kb.disease_index[d] for d, s in seizure if s == seizure[0][1]]
    exact, likelihood = ranker.tie_keys(["HP:0001250"])
    keys = [(-int(exact[i]), -float(likelihood[i]), len(kb.phenotype_indices(i)), i) for i in best]
    assert len(best) == 50 and keys == sorted(keys)


def test_excluded_penalty(kb: HpoKnowledgeBase) -> None:
    penalised = PhenotypeRanker(kb, excluded_penalty=0.5)
    present, excluded = ["HP:0001166", "HP:0001519"], ["HP:0001083"]
    base = penalised.scores(present)
    with_excl = penalised.scores(present, excluded=excluded)
    marfan = kb.disease_index["OMIM:154700"]
    assert with_excl[marfan] == pytest.approx(
        base[marfan] - 0.5 * kb.information_content("HP:0001083") / 2
    )
    lacking = [d for d in range(kb.n_universe) if kb.term_index("HP:0001083") not in kb.closure(d)]
    assert np.allclose(with_excl[lacking], base[lacking])
    assert np.allclose(PhenotypeRanker(kb).scores(present, excluded=excluded), base)
    with pytest.raises(ValueError, match="excluded_penalty"):
        PhenotypeRanker(kb, excluded_penalty=-1)


def test_errors(ranker: PhenotypeRanker) -> None:
    with pytest.raises(ValueError, match="HP:9999999"):
        ranker.rank(["HP:0001250", "HP:9999999"])
    with pytest.raises(ValueError, match="at least one"):
        ranker.rank([])
    with pytest.raises(ValueError, match="k must be"):
        ranker.rank(["HP:0001250"], k=0)


def test_top_k_is_deterministic() -> None:
    scores = np.array([1.0, 3.0, 3.0, 2.0, 3.0])
    assert top_k(scores, 2).tolist() == [1, 2]
    assert top_k(scores, 3, tiebreak=np.array([0, 5, 5, 0, 1])).tolist() == [4, 1, 2]
    assert top_k(scores, 10).tolist() == [1, 2, 4, 3, 0]


def test_the_reference_ranker_maps_its_arrays_from_the_disk_cache(
    kb: HpoKnowledgeBase, ranker: PhenotypeRanker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cached arrays are the computed ones, read-only file pages; a later process maps them without computing."""
    from agentenv.envs.rare_disease.tools import ranker_cache
    from agentenv.envs.rare_disease.tools.phenotype_ranker import (
        ARRAY_NAMES,
        DEFAULT_HUB_MIN_DISEASES,
        reference_ranker,
    )

    cached = ranker_cache.cached_ranker_arrays(kb, DEFAULT_HUB_MIN_DISEASES)
    for name in ARRAY_NAMES:
        assert isinstance(cached[name], np.memmap) and not cached[name].flags.writeable, name
        assert np.array_equal(cached[name], getattr(ranker, f"_{name}")), name

    def no_compute(*_: object) -> None:
        raise AssertionError("computed again although the cache holds the arrays")

    monkeypatch.setattr(ranker_cache, "ranker_arrays", no_compute)
    again = PhenotypeRanker(
        kb, arrays=ranker_cache.cached_ranker_arrays(kb, DEFAULT_HUB_MIN_DISEASES)
    )
    marfan = ["HP:0001166", "HP:0001519", "HP:0001083", "HP:0002616"]
    assert (
        again.rank(marfan, k=10)
        == ranker.rank(marfan, k=10)
        == reference_ranker(kb).rank(marfan, k=10)
    )
