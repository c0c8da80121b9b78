"""Shared fixtures: the real HPO knowledge base and one env of each registered id, built once."""

from __future__ import annotations

import gymnasium as gym
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.corpora.hpo import HpoKnowledgeBase, load_hpo_kb


@pytest.fixture(scope="session")
def kb() -> HpoKnowledgeBase:
    return load_hpo_kb()


@pytest.fixture(scope="session")
def multi_env() -> gym.Env:
    return gym.make("RareDiseaseDiagnosis-v0")


@pytest.fixture(scope="session")
def single_env() -> gym.Env:
    return gym.make("RareDiseaseDiagnosis-SingleTurn-v0")
