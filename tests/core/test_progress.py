"""A cold start is never silent: slow build steps say what they do and how long they took."""

from __future__ import annotations

import io
import time

from agentenv.storage.progress import build_step


def test_a_fast_step_prints_nothing() -> None:
    out = io.StringIO()
    with build_step("quick", after_s=5, stream=out):
        pass
    assert out.getvalue() == ""


def test_a_slow_step_is_announced_and_timed() -> None:
    out = io.StringIO()
    with build_step("building the thing", after_s=0.01, stream=out):
        time.sleep(0.2)
    lines = out.getvalue().splitlines()
    assert lines[0] == "agentenv: building the thing (first use; cached afterwards) ..."
    assert lines[1].startswith("agentenv: building the thing: done in ")
