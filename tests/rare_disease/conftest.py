"""Session fixtures: the real HPO knowledge base, built or loaded once for all rare-disease tests."""

from __future__ import annotations

import pytest

from agentenv.corpora.hpo import HpoKnowledgeBase, load_hpo_kb
from agentenv.envs.rare_disease.phenotype_ranker import PhenotypeRanker


@pytest.fixture(scope="session")
def kb() -> HpoKnowledgeBase:
    return load_hpo_kb()


@pytest.fixture(scope="session")
def ranker(kb: HpoKnowledgeBase) -> PhenotypeRanker:
    return PhenotypeRanker(kb)
