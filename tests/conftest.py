"""Fixtures shared across test folders."""

from __future__ import annotations

import pytest

from .baselines.fake_openai import official_qwen3_template


@pytest.fixture(scope="module")
def official() -> str:
    """The official Qwen3 chat template text (TRL's copy); the test is skipped without TRL."""
    text = official_qwen3_template()
    if text is None:
        pytest.skip("TRL (with its copy of the official Qwen3 chat template) is not installed")
    return text
