"""Session fixtures: the real HPO knowledge base, built or loaded once for the corpus tests."""

from __future__ import annotations

import pytest

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase, load_hpo_kb


@pytest.fixture(scope="session")
def kb() -> HpoKnowledgeBase:
    return load_hpo_kb()
