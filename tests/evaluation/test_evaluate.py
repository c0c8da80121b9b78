"""``agentenv.evaluation.evaluate``: the library call behind ``agentenv eval``.

Why: a Python user gets the run directory's guarantees (no overwrite unless told, resume to the
same bytes, a status instead of an exit code) without copying the command line's code.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentenv.errors import UserInputError
from agentenv.evaluation.evaluate import evaluate

ENV = "MediaSearch-SingleTurn-v0"


def test_a_resumed_run_writes_what_one_run_writes(tmp_path: Path) -> None:
    whole = evaluate(ENV, "random", out=tmp_path / "whole", episodes=4, seed=3)
    assert (whole.status, whole.done, whole.planned) == ("complete", 4, 4)
    first = evaluate(ENV, "random", out=tmp_path / "parts", episodes=2, seed=3)
    assert first.summary.episodes == 2
    with pytest.raises(UserInputError):
        evaluate(ENV, "random", out=tmp_path / "parts", episodes=4, seed=3)  # neither flag
    resumed = evaluate(ENV, "random", out=tmp_path / "parts", episodes=4, seed=3, resume=True)
    assert (resumed.status, resumed.done) == ("complete", 4)
    episodes = "episodes.jsonl"
    assert (tmp_path / "parts" / episodes).read_bytes() == (
        tmp_path / "whole" / episodes
    ).read_bytes()


def test_values_are_checked_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(
        UserInputError, match="split 'real' is not one of MediaSearch-SingleTurn-v0's"
    ):
        evaluate(ENV, "random", out=tmp_path, split="real")
    with pytest.raises(UserInputError, match="resume and overwrite"):
        evaluate(ENV, "random", out=tmp_path, resume=True, overwrite=True)
    assert not any(tmp_path.iterdir())
