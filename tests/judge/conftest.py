"""Fixtures: a fake judge endpoint on loopback, and eval records from the toy env."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .fake_endpoint import FakeJudge
from .records import toy_records


@pytest.fixture
def fake_judge() -> Iterator[FakeJudge]:
    with FakeJudge() as judge:
        yield judge


@pytest.fixture(scope="session")
def records() -> list[dict[str, Any]]:
    return toy_records()
