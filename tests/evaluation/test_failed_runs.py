"""Runs that fail loudly: agent failures are counted, a mostly-failed run exits non-zero, the board refuses it.

A dead model endpoint used to give an evaluation with exit status 0 and
accuracy 0.000 that the leaderboard ranked like any other run.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from agentenv.cli import leaderboard as leaderboard_cli
from agentenv.cli.main import main
from agentenv.evaluation.leaderboard import LeaderboardError, write_leaderboard
from agentenv.evaluation.report import (
    FAILED_RUN_EXIT,
    exit_code,
    failed_run_message,
    format_table,
    summarize,
)
from agentenv.evaluation.runner import RunConfig
from agentenv.evaluation.summary import Summary

from ..baselines.fake_openai import FakeOpenAI, Reply
from .test_leaderboard import save, summary


def record(i: int, failure: str | None = None) -> dict:
    out = {
        "episode": i,
        "task_id": f"t{i}",
        "kind": "k",
        "difficulty": "easy",
        "reward": 0.0,
        "terminated": failure is None,
        "truncated": failure is not None,
        "reward_components": {"accuracy": 0.0},
        "turns": 1,
        "tool_calls": 0,
        "messages": [],
    }
    if failure is not None:
        out["agent_failure"] = failure
    return out


def summarized(failed: int, total: int) -> Summary:
    records = [
        record(
            i,
            f"http://127.0.0.1:9/v1/chat/completions: connection refused #{i % 2}"
            if i < failed
            else None,
        )
        for i in range(total)
    ]
    return summarize(RunConfig("MediaSearch-v0", "llm"), records, 1.0, {"n_tasks": 10})


def test_summary_counts_agent_failures_and_their_reasons() -> None:
    s = summarized(3, 4)
    assert (s.agent_failures, s.agent_failure_rate, s.metrics["agent_failure_rate"]) == (
        3,
        0.75,
        0.75,
    )
    assert s.agent_failure_reasons == {
        "http://127.0.0.1:9/v1/chat/completions: connection refused #0": 2,
        "http://127.0.0.1:9/v1/chat/completions: connection refused #1": 1,
    }
    assert s.failed and "FAILED RUN: 3 of 4 episodes" in format_table(s)
    clean = summarized(0, 4)
    assert (
        clean.agent_failures,
        clean.agent_failure_rate,
        clean.agent_failure_reasons,
        clean.failed,
    ) == (0, 0.0, {}, False)
    assert "agent_failures" not in format_table(clean) and "FAILED" not in format_table(clean)
    # Summaries written before these fields existed still load, as runs without failures.
    old = json.loads(clean.model_dump_json())
    for key in ("agent_failures", "agent_failure_rate", "agent_failure_reasons"):
        del old[key]
    assert Summary.model_validate(old).agent_failures == 0


def test_long_reasons_are_shortened() -> None:
    records = [record(0, "x" * 1000 + "\n" + "y")]
    s = summarize(RunConfig("MediaSearch-v0", "llm"), records, 1.0, {})
    (reason,) = s.agent_failure_reasons
    assert len(reason) == 200 and reason.endswith("…")


@pytest.mark.parametrize(
    ("failed", "total", "code"),
    [(3, 4, FAILED_RUN_EXIT), (2, 4, 0), (1, 4, 0), (4, 4, FAILED_RUN_EXIT)],
)
def test_a_mostly_failed_run_exits_non_zero_with_a_message(failed, total, code) -> None:
    s = summarized(failed, total)
    stream = io.StringIO()
    assert exit_code(s, stream=stream) == code
    if code:
        message = stream.getvalue()
        assert message.startswith(f"agentenv eval: failed run: {failed} of {total} episodes")
        assert "connection refused" in message and "--keep-failed" in message
    else:
        assert stream.getvalue() == "" and failed_run_message(s) is None


def _eval_dead_endpoint(out: Path) -> int:
    """An endpoint that passes the start-up check (it lists its models) and then drops every chat request:
    a server that died after the run started. (One dead from the start is refused before the first
    episode: tests/baselines/test_llm_preflight.py.)"""
    with FakeOpenAI(lambda body: Reply(drop=True), models=["x"]) as server:
        return main(
            [
                "eval",
                "MediaSearch-SingleTurn-v0",
                "--agent",
                "llm",
                "--agent-args",
                f"base_url={server.url}",
                "model=x",
                "retries=0",
                "timeout_s=2",
                "--split",
                "validation",
                "--episodes",
                "3",
                "--out",
                str(out),
                "--no-progress",
            ]
        )


def test_a_dead_endpoint_is_counted_in_summary_json(tmp_path) -> None:
    _eval_dead_endpoint(tmp_path / "run")
    s = Summary.model_validate_json((tmp_path / "run" / "summary.json").read_text())
    assert (s.agent_failures, s.agent_failure_rate, s.failed) == (3, 1.0, True)
    assert "connection failed" in next(iter(s.agent_failure_reasons))
    assert exit_code(s, stream=io.StringIO()) == FAILED_RUN_EXIT


def test_agentenv_eval_exits_non_zero_on_a_dead_endpoint(tmp_path, capsys) -> None:
    assert _eval_dead_endpoint(tmp_path / "run") == FAILED_RUN_EXIT
    assert "failed run: 3 of 3 episodes" in capsys.readouterr().err


def test_the_leaderboard_refuses_a_failed_run_unless_asked_to_keep_it(tmp_path, capsys) -> None:
    good = save(tmp_path, "runs/bm25", summary("bm25", 0.49))
    dead = summary("llm", 0.0, model="x").model_copy(
        update={
            "agent_failures": 600,
            "agent_failure_rate": 0.6,
            "agent_failure_reasons": {"http://h/v1/chat/completions: connection refused": 600},
        }
    )
    failed = save(tmp_path, "runs/llm", dead)
    with pytest.raises(
        LeaderboardError,
        match="a failed run: 600 of 1000 episodes .60%.*connection refused.*--keep-failed",
    ):
        write_leaderboard([good, failed], tmp_path / "board", plots=False)
    assert not (tmp_path / "board").exists()  # nothing written
    assert (
        leaderboard_cli.main(
            [str(tmp_path / "runs"), "--out", str(tmp_path / "board"), "--no-plots"]
        )
        == 2
    )
    assert "--keep-failed" in capsys.readouterr().err

    assert (
        leaderboard_cli.main(
            [
                str(tmp_path / "runs"),
                "--out",
                str(tmp_path / "board"),
                "--no-plots",
                "--keep-failed",
            ]
        )
        == 0
    )
    board = (tmp_path / "board" / "leaderboard.md").read_text()
    assert "| 1000 (600 agent failures) (unverified) |" in board and "llm (model=x)" in board


def test_half_failed_runs_stay_on_the_board(tmp_path) -> None:
    half = summary("llm", 0.3, model="y").model_copy(
        update={"agent_failures": 500, "agent_failure_rate": 0.5}
    )
    written = write_leaderboard([save(tmp_path, "llm", half)], tmp_path / "board", plots=False)
    assert "1000 (500 agent failures)" in written[0].read_text()
