"""Shared fixtures: the real HPO knowledge base, the reference ranker and one env of each id, built once."""

from __future__ import annotations

import gymnasium as gym
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase, load_hpo_kb
from agentenv.envs.rare_disease.tools.phenotype_ranker import PhenotypeRanker


@pytest.fixture(scope="session")
def kb() -> HpoKnowledgeBase:
    return load_hpo_kb()


@pytest.fixture(scope="session")
def ranker(kb: HpoKnowledgeBase) -> PhenotypeRanker:
    return PhenotypeRanker(kb)


@pytest.fixture(scope="session")
def multi_env() -> gym.Env:
    return gym.make("RareDiseaseDiagnosis-v0", split="test")  # fixtures pick test-split cases


@pytest.fixture(scope="session")
def single_env() -> gym.Env:
    return gym.make("RareDiseaseDiagnosis-SingleTurn-v0", split="test")
