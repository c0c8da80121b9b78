"""`agentenv export-sft --overwrite` replaces a previous export and nothing else: not a file of the
user's beside it, not the task file it reads, not a FIFO, a link or a device named as --out; and an
export that keeps no episode is refused, leaving nothing behind."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

pytest.importorskip("tokenizers")

from agentenv.cli.main import main  # noqa: E402
from agentenv.data.export_files import node_kind, refuse_non_export  # noqa: E402
from agentenv.errors import UserInputError  # noqa: E402
from agentenv.evaluation.agents import make_agent, register_agent, unregister_agent  # noqa: E402

TASK = {"id": "people-01", "question": "blomkamp's district 9, what year", "answer": "2009"}


def _export(out: Path, *extra: str) -> int:
    argv = ["export-sft", "MediaSearch-v0", "--episodes", "1", "--no-progress", "--out", str(out)]
    return main([*argv, *extra])


def _one_error(capsys: pytest.CaptureFixture[str]) -> str:
    """The command's stderr, checked to be one line."""
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def first_export(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """One export's files, copied into each test's folder (one run for the module)."""
    out = tmp_path_factory.mktemp("first") / "sft"
    assert _export(out) == 0
    return _snapshot(out)


def _previous_export(folder: Path, files: dict[str, bytes]) -> Path:
    folder.mkdir()
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return folder


def test_a_users_file_beside_an_export_blocks_overwrite(
    tmp_path: Path, first_export: dict[str, bytes], capsys: pytest.CaptureFixture[str]
) -> None:
    out = _previous_export(tmp_path / "sft0", first_export)
    (out / "notes.txt").write_text("notes\n", encoding="utf-8")
    assert _export(out, "--overwrite") == 2
    err = _one_error(capsys)
    assert "notes.txt" in err and str(out) in err and "--overwrite" in err
    assert (out / "notes.txt").read_text(encoding="utf-8") == "notes\n"
    assert {k: v for k, v in _snapshot(out).items() if k != "notes.txt"} == first_export


def test_a_previous_export_alone_is_replaced(
    tmp_path: Path, first_export: dict[str, bytes]
) -> None:
    out = _previous_export(tmp_path / "sft", first_export)
    assert _export(out, "--overwrite", "--seed", "3") == 0
    assert set(_snapshot(out)) == set(first_export) and _snapshot(out) != first_export
    assert [p.name for p in tmp_path.iterdir()] == ["sft"]


@pytest.mark.parametrize("name", ["mytasks.jsonl", "chat.jsonl"])
def test_an_out_holding_the_task_file_is_refused(
    tmp_path: Path,
    first_export: dict[str, bytes],
    capsys: pytest.CaptureFixture[str],
    name: str,
) -> None:
    """chat.jsonl: a task file named as an export file passes the folder's name check, not this one."""
    out = _previous_export(tmp_path / "es", first_export)
    tasks = out / name
    tasks.write_text(json.dumps(TASK) + "\n", encoding="utf-8")
    before = tasks.read_bytes()
    assert _export(out, "--tasks", str(tasks), "--overwrite") == 2
    err = _one_error(capsys)
    assert "--tasks" in err and str(tasks) in err and "holds" in err
    assert tasks.read_bytes() == before


def test_an_out_inside_the_task_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "t.jsonl").write_text(json.dumps(TASK) + "\n", encoding="utf-8")
    assert _export(folder / "sft", "--tasks", str(folder)) == 2
    assert "lies inside the --tasks input" in _one_error(capsys)
    assert [p.name for p in folder.iterdir()] == ["t.jsonl"]


def test_a_fifo_as_out_is_refused_and_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert _export(fifo, "--overwrite") == 2
    err = _one_error(capsys)
    assert "named pipe (FIFO)" in err and str(fifo) in err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_symlink_loop_as_out_is_refused_and_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop.name)
    assert _export(loop, "--overwrite") == 2
    assert "symbolic link loop" in _one_error(capsys)
    assert os.readlink(loop) == "loop"


def test_a_link_to_an_export_names_its_target(
    tmp_path: Path, first_export: dict[str, bytes], capsys: pytest.CaptureFixture[str]
) -> None:
    """os.replace would swap the link for a folder, the export it leads to left as it was."""
    target = _previous_export(tmp_path / "real", first_export)
    link = tmp_path / "link"
    link.symlink_to(target)
    assert _export(link, "--overwrite") == 2
    assert f"name the folder it leads to ({target.resolve()})" in _one_error(capsys)
    assert link.is_symlink() and _snapshot(target) == first_export


def test_an_export_that_keeps_nothing_is_refused_and_leaves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "e_minr5"
    assert _export(out, "--min-reward", "5") == 2
    err = _one_error(capsys)
    assert "--min-reward 5" in err and "best reward was 1" in err and "nothing written" in err
    assert list(tmp_path.iterdir()) == []  # no folder, no staging folder


def test_an_export_that_keeps_nothing_leaves_the_previous_one(
    tmp_path: Path, first_export: dict[str, bytes], capsys: pytest.CaptureFixture[str]
) -> None:
    out = _previous_export(tmp_path / "sft", first_export)
    assert _export(out, "--min-reward", "5", "--overwrite") == 2
    assert "--min-reward" in _one_error(capsys)
    assert _snapshot(out) == first_export and [p.name for p in tmp_path.iterdir()] == ["sft"]


class _NoteWritingOracle:
    """The oracle, which also drops the user's notes into --out while the export runs."""

    name = "note-writing-oracle"
    target: Path

    def __init__(self) -> None:
        self.inner = make_agent("oracle")

    def reset(self, obs, info, *, task, rng) -> None:  # noqa: ANN001
        (self.target / "notes.txt").write_text("written meanwhile\n", encoding="utf-8")
        self.inner.reset(obs, info, task=task, rng=rng)

    def act(self, obs, info) -> str:  # noqa: ANN001
        return self.inner.act(obs, info)


def test_a_file_added_to_out_during_the_export_is_kept(
    tmp_path: Path, first_export: dict[str, bytes], capsys: pytest.CaptureFixture[str]
) -> None:
    out = _previous_export(tmp_path / "sft", first_export)
    _NoteWritingOracle.target = out
    register_agent(_NoteWritingOracle.name, _NoteWritingOracle)
    try:
        assert _export(out, "--agent", _NoteWritingOracle.name, "--overwrite") == 2
    finally:
        unregister_agent(_NoteWritingOracle.name)
    assert "notes.txt" in _one_error(capsys)
    assert (out / "notes.txt").read_text(encoding="utf-8") == "written meanwhile\n"
    assert [p.name for p in tmp_path.iterdir()] == ["sft"]


def test_a_folder_named_as_an_export_file_is_not_an_export(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text("{}", encoding="utf-8")
    (tmp_path / "chat.jsonl").mkdir()
    with pytest.raises(UserInputError, match=r"not an SFT export \(chat.jsonl\)"):
        refuse_non_export(tmp_path, overwrite=True)


def test_export_file_names_without_a_manifest_are_not_an_export(tmp_path: Path) -> None:
    (tmp_path / "chat.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(UserInputError, match="not an SFT export"):
        refuse_non_export(tmp_path, overwrite=True)


def test_node_kind_names_what_is_there_without_following_the_last_link(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "file").write_text("", encoding="utf-8")
    assert node_kind(tmp_path / "fifo") == "a named pipe (FIFO)"
    assert node_kind(tmp_path / "dangling") == f"a symbolic link to nothing ({tmp_path}/nowhere)"
    assert node_kind(tmp_path / "file") == "a file" and node_kind(tmp_path) == "a folder"
    assert node_kind(tmp_path / "file" / "below") is None
