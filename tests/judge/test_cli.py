"""``agentenv judge-consistency`` glue: exit codes, report, JSON, cache, errors."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from agentenv.cli.judge_consistency import add_parser, run
from agentenv.judge import PROMPTS

from .fake_endpoint import FakeJudge


def main(argv: list[str]) -> int:
    sub = argparse.ArgumentParser(prog="agentenv").add_subparsers(dest="command", required=True)
    add_parser(sub)
    return run(sub.choices["judge-consistency"].parse_args(argv))


@pytest.fixture
def episodes(tmp_path: Path, records: list[dict]) -> Path:
    path = tmp_path / "episodes.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def args(episodes: Path, url: str, model: str, *extra: str) -> list[str]:
    return [
        "--env",
        "MediaSearch-v0",
        "--episodes",
        str(episodes),
        "--endpoint",
        url,
        "--model",
        model,
        *extra,
    ]


def test_stable_and_flippy(
    fake_judge: FakeJudge, episodes: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "report.json"
    cache = tmp_path / "cache.jsonl"
    assert (
        main(args(episodes, fake_judge.url, "stable", "--json", str(out), "--cache", str(cache)))
        == 0
    )
    printed = capsys.readouterr().out
    assert "STABLE" in printed and f"HTTP requests made: {9 * len(PROMPTS)}" in printed
    report = json.loads(out.read_text())
    assert (report["stable"], report["fleiss_kappa"], report["flip_rate"], report["n_items"]) == (
        True,
        1.0,
        0.0,
        9,
    )
    assert main(args(episodes, fake_judge.url, "stable", "--cache", str(cache))) == 0
    assert "HTTP requests made: 0" in capsys.readouterr().out
    assert main(args(episodes, fake_judge.url, "flippy", "--limit", "4")) == 1
    assert "UNSTABLE" in capsys.readouterr().out


def test_the_env_defaults_to_the_runs_summary(
    fake_judge: FakeJudge, episodes: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    argv = args(episodes, fake_judge.url, "stable")[2:]  # no --env
    assert main(argv) == 2
    assert "--env is needed" in capsys.readouterr().err
    (tmp_path / "summary.json").write_text(json.dumps({"env_id": "MediaSearch-v0"}))
    assert main(argv) == 0
    assert "on MediaSearch-v0" in capsys.readouterr().out
    assert main(["--env", "RareDiseaseDiagnosis-v0", *argv]) == 2
    assert "disagrees with the run's summary.json" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"--env": "Nope-v0"}, "--env 'Nope-v0' is not a registered id"),
        ({"--episodes": "missing.jsonl"}, "no such file"),
        ({"--model": "broken"}, "failed after 1 attempts; last error: HTTP 500"),
        ({"--api-key-env": "AGENTENV_TEST_UNSET_VARIABLE"}, "empty or unset"),
    ],
)
def test_errors_exit_2(
    fake_judge: FakeJudge,
    episodes: Path,
    capsys: pytest.CaptureFixture,
    change: dict,
    fragment: str,
) -> None:
    argv = args(episodes, fake_judge.url, "stable", "--retries", "0")
    for key, value in change.items():
        if key in argv:
            argv[argv.index(key) + 1] = value
        else:
            argv += [key, value]
    assert main(argv) == 2
    assert fragment in capsys.readouterr().err


def test_a_judge_that_always_says_yes_is_flagged(
    fake_judge: FakeJudge, episodes: Path, capsys: pytest.CaptureFixture
) -> None:
    """Stable across prompts (kappa undefined, no flips), and it tells nothing apart: say so."""
    assert main(args(episodes, fake_judge.url, "always-yes")) == 0
    printed = capsys.readouterr().out
    assert "every verdict was the same" in printed


@pytest.mark.parametrize(
    ("write", "fragment"),
    [
        (lambda p: os.mkfifo(p), "a FIFO, not a regular file"),
        (lambda p: p.write_text('{"a": 1}\n[1, 2]\n'), "line 2: a JSON list where an episode"),
        (lambda p: p.write_text('{"a": 1}\n\n{"a": \n'), "line 3: not JSON"),
        (lambda p: p.write_text("[" * 100_000 + "\n"), "line 1: JSON nested too deeply"),
    ],
)
def test_an_episodes_file_that_is_no_run_is_one_line_naming_it(
    fake_judge: FakeJudge,
    episodes: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
    write: Callable[[Path], object],
    fragment: str,
) -> None:
    """A FIFO used to hang the command in ``read_text``; a bad line gave a traceback or no line number."""
    bad = tmp_path / "bad.jsonl"
    write(bad)
    argv = args(episodes, fake_judge.url, "stable", "--retries", "0")
    argv[argv.index("--episodes") + 1] = str(bad)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert fragment in err and str(bad) in err and "Traceback" not in err
