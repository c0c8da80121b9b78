"""A board that refuses to rank runs together says which setting differs and how to make it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentenv.cli.main import main

ENV = "MediaSearch-v0"


def _eval(out: Path, *extra: str) -> None:
    argv = ["eval", ENV, "--agent", "oracle", "--episodes", "3", "--no-progress", "--out", str(out)]
    assert main([*argv, *extra]) == 0


def test_runs_of_two_reward_presets_name_the_reward_not_env_args(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Told 'one board per set of --env-arg' and 'e.g. another task subset', a user who had only
    passed --reward (as the reward-hacking lesson does) was sent looking for the wrong flag."""
    _eval(tmp_path / "runs" / "lenient", "--reward", "lenient")
    _eval(tmp_path / "runs" / "strict", "--reward", "strict")
    capsys.readouterr()
    assert main(["leaderboard", str(tmp_path / "runs"), "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert "different reward presets (reward 'lenient' vs 'strict')" in err
    assert "one board per --reward setting" in err and "--env-arg" not in err


def test_runs_of_two_splits_say_to_give_one_splits_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """README's own layout (results/bm25 on test, results/casual/bm25) given as results/."""
    _eval(tmp_path / "results" / "oracle")
    _eval(tmp_path / "results" / "casual" / "oracle", "--split", "casual")
    capsys.readouterr()
    assert main(["leaderboard", str(tmp_path / "results"), "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert (
        "differ in split ('casual' vs 'test')" in err
        or "differ in split ('test' vs 'casual')" in err
    )
    assert "the runs of one split" in err and "results/casual/" in err


def test_a_run_is_not_written_into_a_folder_of_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """`agentenv eval` without --out writes to results/, where the README's runs sit in folders
    of their own; the run landed among them (and `leaderboard results/` read it as one more)."""
    _eval(tmp_path / "results" / "casual" / "oracle", "--split", "casual")
    capsys.readouterr()
    argv = ["eval", ENV, "--agent", "oracle", "--episodes", "3", "--no-progress"]
    assert main([*argv, "--out", str(tmp_path / "results")]) == 2
    err = capsys.readouterr().err
    assert (
        "holds other runs below it" in err
        and str(tmp_path / "results" / "casual" / "oracle") in err
    )
    assert not (tmp_path / "results" / "run.json").exists()
    _eval(tmp_path / "results" / "oracle")  # a folder of its own beside them is fine
