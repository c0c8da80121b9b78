"""``agentenv reproduce`` fed hostile flags, and runs that fail, are stopped or are killed.

Every refusal is one line, exit 2, before ``--out`` is made; a run that did not finish never
blocks the same command (a plain rerun replaces it, saying so), a run still in progress is never
replaced, and a run that a killed ``--overwrite`` left set aside is named at the next start. The
lessons are replaced by writers that leave what a lesson leaves, so nothing trains here.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from agentenv.cli import reproduce
from agentenv.evaluation.lesson_runs import MARKER, RUNNING

from .control_bytes import run_cli

SUMMARY = {"strict": {"accuracy": 0.5}, "meta": {"wall_s": 1.0}}
ALL_LESSONS = (
    reproduce.LESSON_NAMES + reproduce.LLM_LESSONS + reproduce.BC_LESSONS + reproduce.JUDGE_LESSONS
)


def _writes_a_run(args: Any) -> int:
    """What a lesson leaves: its runs and a summary."""
    (args.out / "runs").mkdir(exist_ok=True)
    (args.out / "runs" / "new.txt").write_text("new", encoding="utf-8")
    (args.out / "summary.json").write_text(json.dumps(SUMMARY), encoding="utf-8")
    return 0


def _crashes_midway(args: Any) -> int:
    (args.out / "runs" / "strict" / "seed0").mkdir(parents=True)
    (args.out / "log.txt").write_text("started\n", encoding="utf-8")
    raise RuntimeError("the trainer broke")


@pytest.fixture
def lesson(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reproduce, "_run", _writes_a_run)


REFUSED = [
    (["reward-hacking", "--seed-list", "99999999999999999999999"], "--seed-list", "4294967295"),
    (["reward-hacking", "--seed-list", "4294967296"], "--seed-list", "2**32-1"),
    (["reward-hacking", "--seed-list", "3,3"], "--seed-list", "distinct"),
    (["reward-hacking", "--seed-list", ",".join(map(str, range(101)))], "--seed-list", "100"),
    (["reward-hacking", "--seeds", "1000000000000000000"], "--seeds", "1 to 100"),
    (["reward-hacking", "--seeds", "0"], "--seeds", ">= 1"),
    (["reward-hacking", "--timesteps", "10" * 10], "--timesteps", "1,000,000,000"),
    (["reward-hacking", "--baseline-episodes", "-1"], "--baseline-episodes", ">= 0"),
    (["sft-then-rl", "--base", "nosuch-model"], "--base", "smollm2-135m"),
    (["holdout-selection", "--model", "nosuch-model"], "--base", "save_pretrained"),
    (["reward-hacking", "--base", "smollm2-135m"], "--base", "LLM lessons"),
    *[([name, "--eval-episodes", "0"], "--eval-episodes", ">= 1") for name in ALL_LESSONS],
    (["sft-then-rl", "--eval-episodes", "10" * 10], "--eval-episodes", "10,000,000"),
]


@pytest.mark.parametrize(
    ("args", "flag", "allowed"), REFUSED, ids=[" ".join(a)[:50] for a, *_ in REFUSED]
)
def test_a_hostile_flag_is_one_line_and_leaves_no_out(
    args: list[str], flag: str, allowed: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    code, _, err = run_cli(["reproduce", *args, "--quick", "--out", str(out)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert flag in err and allowed in err and "Traceback" not in err, err
    assert not out.exists()


@pytest.mark.parametrize("lesson_name", ["judge-consistency", "sft-then-rl"])
def test_a_base_that_is_not_a_model_folder_names_what_it_lacks(
    lesson_name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "adir"
    folder.mkdir()
    argv = [
        "reproduce",
        lesson_name,
        "--quick",
        "--out",
        str(tmp_path / "r"),
        "--base",
        str(folder),
    ]
    code, _, err = run_cli(argv, capsys)
    assert code == 2 and "--base" in err and "config.json" in err and len(err.splitlines()) == 1
    (folder / "config.json").write_text("{}", encoding="utf-8")
    code, _, err = run_cli(argv, capsys)
    assert code == 2 and "no tokenizer" in err, err
    (folder / "tokenizer.json").write_text("{}", encoding="utf-8")
    code, _, err = run_cli(argv, capsys)
    assert code == 2 and "no weights" in err and not (tmp_path / "r").exists(), err


def test_a_run_that_failed_is_replaced_by_the_same_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rq7"
    argv = ["reproduce", "reward-hacking", "--quick", "--out", str(out)]
    monkeypatch.setattr(reproduce, "_run", _crashes_midway)
    code, _, err = run_cli(argv, capsys)
    assert code == 1 and "the trainer broke" in err
    assert "keeps the files of this unfinished run" in err and (out / "log.txt").is_file()
    monkeypatch.setattr(reproduce, "_run", _writes_a_run)
    code, _, err = run_cli(argv, capsys)
    assert code == 0 and "holds an unfinished run" in err and "replacing it" in err, err
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "runs", "summary.json"]
    assert [p.name for p in tmp_path.iterdir()] == ["rq7"]  # nothing left aside
    code, _, err = run_cli(argv, capsys)  # a complete run still needs --overwrite
    assert code == 2 and "already holds a run; pass --overwrite" in err


def test_a_killed_run_is_replaced_and_a_live_one_refused(
    lesson: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rp6"
    (out / "runs" / "strict" / "seed0").mkdir(parents=True)
    (out / MARKER).write_text('{"command": "agentenv reproduce"}\n', encoding="utf-8")
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as live:
        try:
            owner = {"pid": live.pid, "host": socket.gethostname()}
            (out / RUNNING).write_text(json.dumps(owner), encoding="utf-8")
            for extra in ([], ["--overwrite"]):
                code, _, err = run_cli(
                    ["reproduce", "reward-hacking", "--out", str(out), *extra], capsys
                )
                assert code == 2 and "still in progress" in err and str(live.pid) in err, err
                assert (out / "runs" / "strict").is_dir()
        finally:
            live.kill()
    code, _, err = run_cli(
        ["reproduce", "reward-hacking", "--out", str(out)], capsys
    )  # its pid is gone
    assert code == 0 and "its process ended before it finished" in err, err
    assert not (out / RUNNING).exists() and (out / "runs" / "new.txt").is_file()


def test_a_run_of_another_host_needs_overwrite(
    lesson: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "shared"
    out.mkdir()
    (out / MARKER).write_text("{}\n", encoding="utf-8")
    (out / RUNNING).write_text('{"pid": 1, "host": "elsewhere.invalid"}', encoding="utf-8")
    code, _, err = run_cli(["reproduce", "tool-cost", "--out", str(out)], capsys)
    assert code == 2 and "elsewhere.invalid" in err and "--overwrite" in err
    code, _, err = run_cli(["reproduce", "tool-cost", "--out", str(out), "--overwrite"], capsys)
    assert code == 0 and (out / "summary.json").is_file(), err


def test_a_lesson_that_stops_at_once_removes_only_what_it_made(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def missing_extra(args: Any) -> int:
        raise ImportError("training needs the rl extra: pip install -e '.[rl]'")

    monkeypatch.setattr(reproduce, "_run", missing_extra)
    nested = tmp_path / "a" / "b" / "c"
    code, _, err = run_cli(["reproduce", "reward-hacking", "--out", str(nested)], capsys)
    assert code == 2 and "rl extra" in err and list(tmp_path.iterdir()) == []
    given = tmp_path / "given"
    given.mkdir()
    code, _, err = run_cli(["reproduce", "reward-hacking", "--out", str(given)], capsys)
    assert code == 2 and given.is_dir() and list(given.iterdir()) == []


_KILLED_OVERWRITE = textwrap.dedent(
    """
    import sys, time
    from agentenv.cli import reproduce
    from agentenv.cli.main import main

    def slow(args):
        (args.out / "runs").mkdir()
        (args.out / "runs" / "partial.txt").write_text("partial")
        time.sleep(120)

    reproduce._run = slow
    main(["reproduce", "reward-hacking", "--overwrite", "--out", sys.argv[1]])
    """
)


def test_a_run_set_aside_by_a_killed_overwrite_is_named_at_the_next_start(
    lesson: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "oldrun"
    (out / "runs").mkdir(parents=True)
    (out / "summary.json").write_text('{"old": true}', encoding="utf-8")
    (out / MARKER).write_text("{}\n", encoding="utf-8")
    child = subprocess.Popen([sys.executable, "-c", _KILLED_OVERWRITE, str(out)])
    try:
        deadline = time.monotonic() + 120
        while not (out / "runs" / "partial.txt").exists():
            assert child.poll() is None and time.monotonic() < deadline, "the child did not start"
            time.sleep(0.05)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    (leftover,) = tmp_path.glob(".oldrun.old-*/oldrun")
    code, _, err = run_cli(["reproduce", "reward-hacking", "--out", str(out)], capsys)
    assert code == 0 and "unfinished run" in err, err  # the killed new run is replaced
    warning = next(line for line in err.splitlines() if "warning" in line)
    assert str(leftover) in warning and "mv " in warning and "rm -rf" in warning
    assert json.loads((leftover / "summary.json").read_text()) == {"old": True}  # never deleted
    code, _, err = run_cli(
        ["reproduce", "reward-hacking", "--out", str(out), "--overwrite"], capsys
    )
    assert code == 0 and str(leftover) in err and leftover.is_dir()
