"""A task file with several bad rows names each of them (up to a bound) in one error, and
``agentenv eval --skip-bad-rows`` evaluates the good rows instead, counting the skipped ones."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentenv.cli.main import main
from agentenv.engine.task_files import MAX_REPORTED_BAD_ROWS, SKIP_BAD_ROWS_ENV
from agentenv.envs.media_search.tasks.user_tasks import load_user_tasks, questions_from_rows
from agentenv.errors import UserInputError

GOOD = {"question": "Who directed Inception?", "answer": "Christopher Nolan"}


def _write(path: Path, rows: list[str]) -> Path:
    path.write_text("".join(r + "\n" for r in rows), encoding="utf-8")
    return path


def test_every_bad_row_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SKIP_BAD_ROWS_ENV, raising=False)
    path = _write(
        tmp_path / "t.jsonl", [json.dumps(GOOD), '{"question": "x"}', "not json", '{"answer": "y"}']
    )
    with pytest.raises(UserInputError) as err:
        load_user_tasks(path)
    text = str(err.value)
    assert "3 bad rows" in text and "--skip-bad-rows" in text
    assert all(f"{path}:{n}:" in text for n in (2, 3, 4)) and f"{path}:1:" not in text


def test_the_list_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SKIP_BAD_ROWS_ENV, raising=False)
    extra = 7
    path = _write(tmp_path / "t.jsonl", ["{"] * (MAX_REPORTED_BAD_ROWS + extra))
    with pytest.raises(UserInputError) as err:
        load_user_tasks(path)
    lines = str(err.value).splitlines()
    assert len(lines) == 1 + MAX_REPORTED_BAD_ROWS + 1
    assert lines[-1].strip() == f"... and {extra} more bad rows"


def test_one_bad_row_is_still_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SKIP_BAD_ROWS_ENV, raising=False)
    with pytest.raises(UserInputError) as err:
        questions_from_rows([GOOD, {"question": "q"}])
    assert str(err.value).startswith("tasks[1]: ") and "\n" not in str(err.value)


def test_skipping_keeps_the_good_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SKIP_BAD_ROWS_ENV, "1")
    path = _write(tmp_path / "t.jsonl", ["{", json.dumps(GOOD), '{"question": "x"}'])
    with pytest.warns(UserWarning, match="skipped 2 bad rows"):
        questions = load_user_tasks(path)
    assert [q.question for q in questions] == [GOOD["question"]]


def test_eval_skip_bad_rows_counts_them_in_the_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(SKIP_BAD_ROWS_ENV, raising=False)
    rows = [json.dumps(GOOD), "{", '{"question": "Who directed Heat?"}']
    path = _write(tmp_path / "t.jsonl", rows)
    argv = ["eval", "MediaSearch-v0", "--agent", "oracle", "--tasks", str(path), "--no-progress"]
    assert main([*argv, "--out", str(tmp_path / "refused")]) == 2
    assert "2 bad rows" in capsys.readouterr().err
    with pytest.warns(UserWarning):
        assert main([*argv, "--out", str(tmp_path / "run"), "--skip-bad-rows"]) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["skipped_task_rows"] == 2 and summary["episodes"] == 1
    # the flag holds for its run only: a later read in this process refuses bad rows again
    assert SKIP_BAD_ROWS_ENV not in os.environ
    assert main([*argv, "--out", str(tmp_path / "after")]) == 2
