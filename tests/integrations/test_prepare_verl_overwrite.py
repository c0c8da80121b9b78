"""`agentenv prepare-verl --overwrite` replaces its own earlier rows and nothing else: not the task
file it reads, not a FIFO or a link named as --out, not a parquet file of other rows; and a --seed
no row can store is refused before any row is built. Needs pyarrow (the verl extra), not verl."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from agentenv.cli.main import main
from agentenv.integrations.row_episodes import EpisodeSpec

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

ENV_ID = "MediaSearch-SingleTurn-v0"
TASK = {"id": "people-01", "question": "blomkamp's district 9, what year", "answer": "2009"}
SEED_MAX = 2**63 - 1


def _prepare(out: Path, *extra: str) -> int:
    return main(["prepare-verl", ENV_ID, "--episodes", "1", "--out", str(out), *extra])


def _one_error(capsys: pytest.CaptureFixture[str]) -> str:
    """The command's stderr, checked to be one line."""
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def _task_file(path: Path) -> Path:
    path.write_text(json.dumps(TASK) + "\n", encoding="utf-8")
    return path


def test_out_equal_to_the_task_file_is_refused_with_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The probe's task file was JSONL named .parquet; --overwrite replaced it with rows."""
    tasks = _task_file(tmp_path / "tasks.parquet")
    before = tasks.read_bytes()
    assert _prepare(tasks, "--tasks", str(tasks), "--overwrite") == 2
    err = _one_error(capsys)
    assert f"--out {tasks} is the --tasks input" in err
    assert tasks.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == [tasks.name]


def test_out_linked_to_the_task_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = _task_file(tmp_path / "tasks.parquet")
    link = tmp_path / "rows.parquet"
    link.symlink_to(tasks.name)
    assert _prepare(link, "--tasks", str(tasks), "--overwrite") == 2
    assert "is the --tasks input" in _one_error(capsys)
    assert link.is_symlink() and tasks.read_text(encoding="utf-8") == json.dumps(TASK) + "\n"


def test_a_fifo_as_out_is_refused_and_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "rows.parquet"
    os.mkfifo(fifo)
    assert _prepare(fifo, "--overwrite") == 2
    err = _one_error(capsys)
    assert "named pipe (FIFO), not a file" in err and str(fifo) in err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_symlink_loop_as_out_is_refused_and_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loop = tmp_path / "rows.parquet"
    loop.symlink_to(loop.name)
    assert _prepare(loop, "--overwrite") == 2
    assert "symbolic link loop, not a file" in _one_error(capsys)
    assert os.readlink(loop) == loop.name


def test_overwrite_replaces_no_parquet_file_but_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    theirs = tmp_path / "dataset.parquet"
    pq.write_table(pa.table({"text": ["a user's data"]}), theirs)
    before = theirs.read_bytes()
    assert _prepare(theirs, "--overwrite") == 2
    assert "holds no rows of prepare-verl" in _one_error(capsys)
    assert theirs.read_bytes() == before


def test_overwrite_replaces_earlier_rows_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    out = tmp_path / "rows.parquet"
    partial = tmp_path / ".rows.parquet.partial"  # the fixed name the writer staged to before
    partial.write_text("the user's\n", encoding="utf-8")
    assert _prepare(out) == 0
    assert _prepare(out, "--overwrite", "--seed", "4") == 0
    assert [r["extra_info"]["seed"] for r in pq.read_table(out).to_pylist()] == [4]
    assert partial.read_text(encoding="utf-8") == "the user's\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [partial.name, out.name]


def test_an_interrupted_write_leaves_the_old_rows_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "rows.parquet"
    assert _prepare(out) == 0
    before = out.read_bytes()

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("agentenv.integrations.verl.rows.verl_row", interrupted)
    assert _prepare(out, "--overwrite") == 130
    assert out.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == [out.name]


def test_a_seed_past_int64_is_refused_by_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:  # argparse's refusal, before the env is built
        _prepare(tmp_path / "p.parquet", "--seed", str(SEED_MAX + 1))
    assert stop.value.code == 2
    err = _one_error(capsys)
    assert "--seed" in err and f"from 0 to {SEED_MAX}" in err
    assert list(tmp_path.iterdir()) == []


def test_a_seed_whose_last_episode_overflows_is_refused_before_any_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_row(*args: object, **kwargs: object) -> None:
        raise AssertionError("a row was built")

    monkeypatch.setattr("agentenv.integrations.verl.rows.verl_row", no_row)
    argv = ["prepare-verl", ENV_ID, "--episodes", "2", "--seed", str(SEED_MAX)]
    assert main([*argv, "--out", str(tmp_path / "p.parquet")]) == 2
    err = _one_error(capsys)
    assert f"--seed {SEED_MAX}" in err and f"give --seed at most {SEED_MAX - 1}" in err
    # one pass over one task: one reset seed, the largest a row stores
    tasks = _task_file(tmp_path / "one.jsonl")
    monkeypatch.undo()
    assert _prepare(tmp_path / "p.parquet", "--tasks", str(tasks), "--seed", str(SEED_MAX)) == 0
    (row,) = pq.read_table(tmp_path / "p.parquet").to_pylist()
    assert EpisodeSpec.from_fields(row["extra_info"]).seed == SEED_MAX
