"""The reward decides which scripted policy wins: gaming wins under the wrong preset, loses under the right one.

The workshop lessons as a table. Mean return over the 10 GuessEnv tasks:

=================  ======  =======  =========
policy             strict  lenient  efficient
=================  ======  =======  =========
oracle             1.0     1.0      0.91
answer at once     0.1     0.1      0.08
honest top-3       0.3     0.3      0.28
every tool 8x      1.0     1.0      0.5
list everything    0.0     1.0      -0.02
=================  ======  =======  =========
"""

from __future__ import annotations

from functools import partial

import pytest

from .guess_env import POLICIES, GuessEnv, mean_return

TABLE = {
    "oracle": (1.0, 1.0, 0.91),
    "answer at once": (0.1, 0.1, 0.08),
    "honest top-3": (0.3, 0.3, 0.28),
    "every tool 8x": (1.0, 1.0, 0.5),
    "list everything": (0.0, 1.0, -0.02),
}
PRESETS = ("strict", "lenient", "efficient")


@pytest.fixture(scope="module")
def table() -> dict[str, dict[str, float]]:
    return {
        p: {name: mean_return(partial(GuessEnv, reward=p), pol) for name, pol in POLICIES.items()}
        for p in PRESETS
    }


def test_table(table: dict[str, dict[str, float]]) -> None:
    got = {name: tuple(table[p][name] for p in PRESETS) for name in POLICIES}
    assert got.keys() == TABLE.keys()
    for name, row in TABLE.items():
        assert got[name] == pytest.approx(row), name


def test_listing_everything_wins_under_lenient_and_loses_under_strict(table: dict) -> None:
    assert table["lenient"]["list everything"] > table["lenient"]["honest top-3"]
    assert table["lenient"]["list everything"] == table["lenient"]["oracle"], (
        "as good as knowing the answer"
    )
    assert (
        table["strict"]["list everything"]
        < table["strict"]["answer at once"]
        < table["strict"]["honest top-3"]
    )
    assert table["efficient"]["list everything"] < table["efficient"]["answer at once"]


def test_tool_spam_is_free_under_strict_and_costs_under_efficient(table: dict) -> None:
    assert table["strict"]["every tool 8x"] == table["strict"]["oracle"], (
        "accuracy alone: no pressure on tool calls"
    )
    assert table["efficient"]["every tool 8x"] < table["efficient"]["oracle"]
