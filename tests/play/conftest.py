"""``play`` wraps its text to the terminal's width: its tests pin the width, so the lines they look for
are whole whatever terminal (or none) the test run has."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def fixed_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")  # play_view's own width when there is no terminal
    monkeypatch.setenv("LINES", "24")
