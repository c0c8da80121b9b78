"""Every test of this folder imports the capitals family from ``examples/`` (kept outside the package)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentenv.families import unregister_family

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module", autouse=True)
def capitals_importable(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """``examples/`` on sys.path and a private cache; afterwards the family is gone again, so no other test sees it."""
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(EXAMPLES))
        mp.setenv("AGENTENV_HOME", str(tmp_path_factory.mktemp("agentenv_home")))
        yield
    unregister_family("capitals")
    for name in [m for m in sys.modules if m == "capitals" or m.startswith("capitals.")]:
        del sys.modules[name]
