"""Disease-disjoint, deterministic splits with published sizes and checksums."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase, load_hpo_kb
from agentenv.envs.rare_disease.patients.splits import (
    CASES_PER_DISEASE,
    PUBLISHED,
    SPLITS,
    case_seed,
    cases_checksum,
    split_cases,
    split_diseases,
    split_of,
    split_summary,
)


def test_disjoint_and_complete(kb: HpoKnowledgeBase) -> None:
    parts = {s: set(split_diseases(kb, s)) for s in SPLITS}
    assert not parts["train"] & parts["validation"]
    assert not parts["train"] & parts["test"]
    assert not parts["validation"] & parts["test"]
    assert set().union(*parts.values()) == set(kb.disease_ids)
    for s, frac in (("train", 0.8), ("validation", 0.1), ("test", 0.1)):
        assert len(parts[s]) / kb.n_universe == pytest.approx(frac, abs=0.01)


def test_published_sizes_and_checksums(kb: HpoKnowledgeBase) -> None:
    assert split_summary(kb) == PUBLISHED[(kb.release, kb.universe)]
    assert PUBLISHED[("2025-01-16", "omim")]["test"].n_cases == 786


def test_cases(kb: HpoKnowledgeBase) -> None:
    test = split_cases(kb, "test")
    assert len(test) == len(split_diseases(kb, "test"))  # one case per test disease
    train = split_cases(kb, "train")
    assert len(train) == CASES_PER_DISEASE["train"] * len(split_diseases(kb, "train"))
    assert len({c.seed for c in train}) == len(train)
    assert all(0 <= c.seed < 2**63 for c in train)
    assert split_cases(kb, "test", cases_per_disease=2)[:2] == (
        test[0],
        (test[0].disease_id, case_seed(test[0].disease_id, 1)),
    )
    with pytest.raises(ValueError, match="split must be one of"):
        split_cases(kb, "dev")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cases_per_disease"):
        split_cases(kb, "test", cases_per_disease=0)


def test_split_depends_on_the_id_only() -> None:
    both = load_hpo_kb("omim+orpha")
    assert all(
        split_of(d) == s for s in SPLITS for d in split_diseases(both, s) if d.startswith("OMIM:")
    )
    code = "from agentenv.envs.rare_disease.patients.splits import split_of, case_seed; print(split_of('OMIM:154700'), case_seed('OMIM:154700', 3))"
    runs = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
        for _ in range(2)
    }
    assert len(runs) == 1  # stable across processes (no salted hash())
    assert cases_checksum([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
