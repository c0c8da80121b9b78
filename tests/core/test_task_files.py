"""Task sources are bounded the same way from Python (``gym.make(..., tasks=...)``) as from the command.

``--tasks /dev/zero`` once grew to 5.5 GB; the command learned to refuse it, but
``gym.make(id, tasks=...)`` still read whatever it was given. Each family's
reader now applies :mod:`agentenv.engine.task_files`: size, line length, text, rows.
"""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.engine import task_files
from agentenv.errors import UserInputError

IDS = ("MediaSearch-v0", "RareDiseaseDiagnosis-v0")
ROWS = {
    "MediaSearch-v0": [
        {"question": f"Who directed {film}?", "answer": person}
        for film, person in (
            ("Heat", "Michael Mann"),
            ("Inception", "Christopher Nolan"),
            ("Alien", "Ridley Scott"),
        )
    ],
    "RareDiseaseDiagnosis-v0": [
        {"phenotypes": ["HP:0001166", "HP:0001083"], "diagnosis": ["OMIM:154700"]},
        {"phenotypes": ["HP:0004322", "HP:0000256"], "diagnosis": ["OMIM:100800"]},
        {"phenotypes": ["HP:0004322", "HP:0002983"], "diagnosis": ["OMIM:100800"]},
    ],
}


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("env_id", IDS)
def test_gym_make_refuses_a_device_an_oversized_file_and_a_long_line(
    env_id: str, tmp_path: Path
) -> None:
    with pytest.raises(UserInputError, match="not a regular file or folder"):
        gym.make(env_id, tasks=_fifo_or_device(tmp_path))
    huge = tmp_path / "huge.jsonl"
    with huge.open("wb") as f:  # sparse: refused on its size, before a byte is read
        f.truncate(task_files.MAX_TASK_FILE_BYTES + 1)
    with pytest.raises(
        UserInputError, match=r"tasks .*huge\.jsonl: larger than 256 MiB; split the task set"
    ):
        gym.make(env_id, tasks=str(huge))
    long_line = tmp_path / "long.jsonl"
    long_line.write_text(
        '{"question": "' + "x" * task_files.MAX_TASK_LINE_BYTES + '"}\n', encoding="utf-8"
    )
    with pytest.raises(UserInputError, match="a line longer than 1 MiB; one task per line"):
        gym.make(env_id, tasks=long_line)
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b'{"question": "a\x00"}\n')
    with pytest.raises(UserInputError, match="a binary file"):
        gym.make(env_id, tasks=binary)


def _fifo_or_device(tmp_path: Path) -> str:
    """A path that is neither a file nor a folder, named like a task file (a named pipe)."""
    import os

    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    return str(fifo)


@pytest.mark.parametrize("env_id", IDS)
def test_the_row_cap_holds_for_files_and_lists(
    env_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(task_files, "MAX_TASK_ROWS", 2)
    with pytest.raises(UserInputError, match="more than 2 tasks; split the task set"):
        gym.make(env_id, tasks=ROWS[env_id])
    with pytest.raises(UserInputError, match=r"cases\.jsonl: more than 2 tasks"):
        gym.make(env_id, tasks=str(_jsonl(tmp_path / "cases.jsonl", ROWS[env_id])))
    monkeypatch.setattr(task_files, "MAX_TASK_ROWS", 3)
    assert len(gym.make(env_id, tasks=ROWS[env_id]).unwrapped.tasks) == 3


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (7, "int 7"),
        ("", "str ''"),
        (" a", "str ' a'"),
        ("a\nb", "str 'a\\\\nb'"),
        ("x" * 129, "str 'xxx"),
        (None, "NoneType"),
    ],
)
def test_a_bad_row_id_names_the_row_and_the_field(value: object, shown: str) -> None:
    with pytest.raises(
        UserInputError, match=rf"^t\.jsonl:4: field 'id' must be a string .*; got {shown}"
    ):
        task_files.check_row_id(value, "t.jsonl:4")
