"""Fixtures shared across test folders."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from . import tiers
from .baselines.fake_openai import official_qwen3_template

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def pytest_configure(config: pytest.Config) -> None:
    """Declare the ``fast`` tier's mark and, for ``-m fast``, load the small hypothesis budget (tests/tiers.py)."""
    config.addinivalue_line(
        "markers", "fast: the pre-commit tier, listed in tests/tiers.py (python -m pytest -m fast)"
    )
    tiers.load_fast_profile(config)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tiers before ``-m`` deselects: the slow list first, so no slow test joins the fast tier."""
    tiers.mark_slow(items)
    tiers.mark_fast(items, cap_budgets=tiers.fast_selected(config))


@pytest.fixture(scope="module")
def official() -> str:
    """The official Qwen3 chat template text (TRL's copy); the test is skipped without TRL."""
    text = official_qwen3_template()
    if text is None:
        pytest.skip("TRL (with its copy of the official Qwen3 chat template) is not installed")
    return text


@pytest.fixture
def capitals_on_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``examples/`` on sys.path for one test; afterwards the capitals family is unregistered and its modules
    forgotten, so no later test (a corpus-name doctest, say) sees a third family."""
    from agentenv.families import unregister_family

    monkeypatch.syspath_prepend(str(EXAMPLES))
    yield EXAMPLES
    unregister_family("capitals")
    for name in [m for m in sys.modules if m == "capitals" or m.startswith("capitals.")]:
        del sys.modules[name]
