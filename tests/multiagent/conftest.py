"""Shared fixtures: one env of each multi-agent id, built once per session (real corpora)."""

from __future__ import annotations

import pytest

from agentenv.multiagent import make
from agentenv.multiagent.diagnosis_dialogue import DiagnosisDialogueEnv
from agentenv.multiagent.media_concierge import MediaConciergeEnv


@pytest.fixture(scope="session")
def dx() -> DiagnosisDialogueEnv:
    return make("DiagnosisDialogue-v0")


@pytest.fixture(scope="session")
def media() -> MediaConciergeEnv:
    return make("MediaConcierge-v0")
