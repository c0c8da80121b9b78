"""Fixtures of the hand-written casual question sets' checks (``test_casual_*.py``)."""

from __future__ import annotations

from types import ModuleType

import pytest

from agentenv.engine.tools import ToolRegistry

from ._casual_sets import load_benchmark, tool_registry


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    """``benchmarks/retrieval_quality.py``, where the question sets are read."""
    return load_benchmark()


@pytest.fixture(scope="module")
def registry() -> ToolRegistry:
    """The MediaSearch tools over the catalog, to replay each row's plan."""
    return tool_registry()
