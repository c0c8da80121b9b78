"""Shared fixtures: one env of each multi-agent id, built once per session (real corpora)."""

from __future__ import annotations

import pytest

from agentenv.envs.media_search.dialogue.concierge import MediaConciergeEnv
from agentenv.envs.rare_disease.dialogue.doctor_patient import DiagnosisDialogueEnv
from agentenv.multiagent import make


@pytest.fixture(scope="session")
def dx() -> DiagnosisDialogueEnv:
    return make("DiagnosisDialogue-v0", split="test")  # the figures these tests check are on test


@pytest.fixture(scope="session")
def media() -> MediaConciergeEnv:
    return make("MediaConcierge-v0", split="test")
