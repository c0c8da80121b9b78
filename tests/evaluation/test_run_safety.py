"""Runs never lose work: an existing run is refused, episodes are appended as they finish, Ctrl-C and
SIGTERM keep them with a summary marked incomplete, and --resume finishes the run byte for byte as one
uninterrupted run would have (with one worker or two)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentenv.cli.main import main
from agentenv.evaluation.agents import AgentFailure, register_agent, unregister_agent

RUN = ["eval", "MediaSearch-v0", "--agent", "bm25", "--split", "validation", "--no-progress"]


def _run(out: Path, *extra: str) -> int:
    return main([*RUN, "--out", str(out), *extra])


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted 60-episode run."""
    out = tmp_path_factory.mktemp("ref") / "run"
    assert _run(out, "--episodes", "60") == 0
    return out


def _lines(path: Path) -> list[str]:
    return (path / "episodes.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)


def test_an_existing_run_is_refused_in_one_line_and_overwrite_replaces_it(
    reference: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "run"
    assert _run(out, "--episodes", "5") == 0
    before = (out / "episodes.jsonl").read_bytes()
    capsys.readouterr()
    assert _run(out, "--episodes", "5") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--overwrite" in err and "--resume" in err and str(out) in err
    assert (out / "episodes.jsonl").read_bytes() == before
    assert _run(out, "--episodes", "3", "--overwrite") == 0
    assert len(_lines(out)) == 3 and _lines(out) == _lines(reference)[:3]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_resume_after_a_kill_mid_write_is_byte_identical(
    reference: Path, tmp_path: Path, workers: str
) -> None:
    """A run killed after 23 episodes, the 24th half written, with no summary: --resume runs 23..59 only."""
    out = tmp_path / "run"
    assert _run(out, "--episodes", "60") == 0
    lines = _lines(out)
    (out / "episodes.jsonl").write_text("".join(lines[:23]) + lines[23][:40], encoding="utf-8")
    (out / "summary.json").unlink()
    assert _run(out, "--resume", "--workers", workers) == 0
    assert (out / "episodes.jsonl").read_bytes() == (reference / "episodes.jsonl").read_bytes()
    resumed, full = (json.loads((p / "summary.json").read_text()) for p in (out, reference))
    assert resumed["metrics"] == full["metrics"] and resumed["intervals"] == full["intervals"]
    assert "complete" not in resumed and resumed["episodes"] == 60


@pytest.mark.parametrize(
    ("changed", "key"),
    [
        (["--seed", "1"], "seed"),
        (["--agent", "random"], "agent"),
        (["--split", "test"], "split"),
        (["--env-arg", "max_turns=4"], "env_kwargs"),
        (["--agent-args", "k=3"], "agent_args"),
    ],
)
def test_resume_refuses_a_different_run(
    reference: Path, tmp_path: Path, changed: list[str], key: str, capsys
) -> None:
    out = tmp_path / "run"
    assert _run(out, "--episodes", "4") == 0
    argv = [*RUN, "--out", str(out), "--resume", "--episodes", "8"]
    for flag, value in zip(changed[::2], changed[1::2], strict=True):
        if flag in argv:
            argv[argv.index(flag) + 1] = value
        else:
            argv += [flag, value]
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{key}=" in err and "--overwrite" in err
    assert len(_lines(out)) == 4


SLOW_AGENT = """
import sys, time
from agentenv.evaluation.agents import make_agent, register_agent


class Slow:
    name = "slow-bm25"

    def __init__(self):
        self.inner = make_agent("bm25")

    def reset(self, obs, info, *, task, rng):
        self.inner.reset(obs, info, task=task, rng=rng)

    def act(self, obs, info):
        time.sleep(0.02)
        return self.inner.act(obs, info)


register_agent("slow-bm25", Slow)
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_keeps_finished_episodes_and_resume_with_two_workers_finishes_the_run(
    reference: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    """A real SIGINT or SIGTERM to a running `agentenv eval` (the bm25 agent, slowed): exit 130, one line,
    an incomplete summary; then --resume --workers 2 writes what the uninterrupted bm25 run wrote."""
    out = tmp_path / "run"
    argv = [
        "eval",
        "MediaSearch-v0",
        "--agent",
        "slow-bm25",
        "--split",
        "validation",
        "--no-progress",
        "--out",
        str(out),
    ]
    code = (
        SLOW_AGENT
        # Ctrl-C as in a terminal: a shell's background job (`cmd &`) starts with SIGINT ignored,
        # and Python keeps it ignored, so a suite launched that way would never see the signal.
        + "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
        + f"from agentenv.cli.main import main\nsys.exit(main({[*argv, '--episodes', '60']!r}))\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    episodes = out / "episodes.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if episodes.exists() and len(episodes.read_bytes().splitlines()) >= 3:
            break
        time.sleep(0.01)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "--resume" in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is False and summary["stopped"] == "interrupted"
    assert 3 <= summary["episodes"] == len(_lines(out)) < 60 and summary["episodes_planned"] == 60
    namespace: dict = {}
    exec(SLOW_AGENT, namespace)  # the same agent, registered here
    try:
        assert main([*argv, "--resume", "--workers", "2"]) == 0
    finally:
        unregister_agent("slow-bm25")
    assert (out / "episodes.jsonl").read_bytes() == (reference / "episodes.jsonl").read_bytes()


class _Failing:
    """An agent whose endpoint is down: every act fails."""

    name = "always-fails"

    def reset(self, obs, info, *, task, rng) -> None:  # noqa: ANN001
        pass

    def act(self, obs, info) -> str:  # noqa: ANN001
        raise AgentFailure("http://127.0.0.1:9/v1/chat/completions: connection refused")


def test_a_run_stops_after_n_agent_failures_in_a_row_keeping_them(tmp_path: Path, capsys) -> None:
    register_agent("always-fails", _Failing)
    try:
        out = tmp_path / "run"
        assert (
            main(
                [
                    "eval",
                    "MediaSearch-v0",
                    "--agent",
                    "always-fails",
                    "--episodes",
                    "50",
                    "--max-agent-failures",
                    "4",
                    "--out",
                    str(out),
                    "--no-progress",
                ]
            )
            == 3
        )
        err = capsys.readouterr().err
        assert (
            "4 episodes in a row ended in an agent failure" in err and "connection refused" in err
        )
        assert len(err.strip().splitlines()) == 1
        summary = json.loads((out / "summary.json").read_text())
        assert summary["complete"] is False and summary["episodes"] == 4 and len(_lines(out)) == 4
    finally:
        unregister_agent("always-fails")


def test_out_that_is_a_file_is_one_line(tmp_path: Path, capsys) -> None:
    file = tmp_path / "file"
    file.write_text("x")
    assert _run(file, "--episodes", "1") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--out {file}: is a file" in err


def test_a_family_outside_agentenv_runs_with_env_args(
    tmp_path: Path, capitals_on_path: Path
) -> None:
    """The README's `PYTHONPATH=examples agentenv eval capitals.family:Capitals-v0 ... --env-arg max_turns=3`
    used to crash: the --env-arg check looked the `module:Id` form up without importing the module."""

    out = tmp_path / "run"
    assert (
        main(
            [
                "eval",
                "capitals.family:Capitals-v0",
                "--agent",
                "oracle",
                "--episodes",
                "5",
                "--env-arg",
                "max_turns=3",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    assert json.loads((out / "summary.json").read_text())["env_kwargs"] == {"max_turns": 3}


class _StopsAtThirdEpisode:
    """bm25 until its third episode, then Ctrl-C."""

    name = "stops-at-third"

    def __init__(self) -> None:
        from agentenv.evaluation.agents import make_agent

        self.inner = make_agent("bm25")
        self.episodes = 0

    def reset(self, obs, info, *, task, rng) -> None:
        self.episodes += 1
        self.inner.reset(obs, info, task=task, rng=rng)

    def act(self, obs, info) -> str:
        if self.episodes >= 3:
            raise KeyboardInterrupt
        return self.inner.act(obs, info)


def test_an_interrupted_overwrite_keeps_the_run_it_replaces_until_it_completes(
    tmp_path: Path, capsys
) -> None:
    """--overwrite deleted the old run's files before its first episode: Ctrl-C left neither whole."""
    out = tmp_path / "run"
    assert _run(out, "--episodes", "5") == 0
    complete = (out / "episodes.jsonl").read_bytes()
    register_agent("stops-at-third", _StopsAtThirdEpisode)
    try:
        for _ in range(2):  # a second stopped overwrite keeps the complete run, not the stopped one
            argv = ["eval", "MediaSearch-v0", "--agent", "stops-at-third", "--split", "validation"]
            assert main([*argv, "--no-progress", "--out", str(out), "--overwrite"]) == 130
            assert "stays in" in capsys.readouterr().err
            assert (out / ".previous-run" / "episodes.jsonl").read_bytes() == complete
            assert json.loads((out / "summary.json").read_text())["complete"] is False
    finally:
        unregister_agent("stops-at-third")
    assert _run(out, "--episodes", "5", "--overwrite") == 0
    assert not (out / ".previous-run").exists()
    assert (out / "episodes.jsonl").read_bytes() == complete
    assert main(["leaderboard", str(tmp_path), "--out", str(tmp_path / "board"), "--no-plots"]) == 0


def test_run_files_are_readable_as_plain_files_would_be(tmp_path: Path) -> None:
    """summary.json and run.json were mkstemp's 0600: others sharing a results folder could not
    read them (export folders were 0700)."""
    from agentenv.storage.paths import normal_mode

    out = tmp_path / "run"
    assert _run(out, "--episodes", "2") == 0
    for name in ("summary.json", "run.json", "episodes.jsonl"):
        assert (out / name).stat().st_mode & 0o777 == normal_mode(), name
