"""Task-file rows a generated probe found accepted and then wrong or fatal later, now refused at load.

Each refusal names the file, line and field, as the task-file grammar promises.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import gymnasium as gym
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.errors import UserInputError

HEAT = "that 1995 heist movie with pacino and de niro?"
MARFAN = {"phenotypes": ["HP:0001166", "HP:0001083", "HP:0001519"], "diagnosis": ["OMIM:154700"]}


def _write(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_an_alias_that_is_another_films_id_is_refused(tmp_path: Path) -> None:
    """It used to replace the gold film: Inception scored 1.0 on a question whose gold is Heat."""
    bad = _write(
        tmp_path / "t.jsonl",
        json.dumps({"question": HEAT, "answer": "Heat (1995)", "aliases": ["tt1375666"]}),
    )
    with pytest.raises(
        UserInputError,
        match=r"t.jsonl:1: alias 'tt1375666' is a film id, but not of the gold's film tt0113277",
    ):
        gym.make("MediaSearch-v0", tasks=str(bad))


def test_the_gold_films_own_id_as_an_alias_grades_the_gold(tmp_path: Path) -> None:
    good = _write(
        tmp_path / "t.jsonl",
        json.dumps({"question": HEAT, "answer": "Heat (1995)", "aliases": ["Heat", "tt0113277"]}),
    )
    env = gym.make("MediaSearch-v0", tasks=str(good))
    for answer, expected in (("Heat (1995)", 1.0), ("tt0113277", 1.0), ("Inception", 0.0)):
        env.reset(options={"index": 0})
        info = env.step(f"<answer>{answer}</answer>")[4]
        assert info["reward_components"]["accuracy"] == expected, answer


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {"question": "how many films?", "answer": "4", "aliases": ["9" * 200]},
            "field 'aliases\\[0\\]' holds a number of more than 30 digits",
        ),
        (
            {
                "question": "Who directed Inception?",
                "answer": "Christopher Nolan",
                "aliases": ["\udfff"],
            },
            "field 'aliases\\[0\\]' holds a lone UTF-16 surrogate",
        ),
        (
            {"question": "Who directed \ud800 Inception?", "answer": "Christopher Nolan"},
            "field 'question' holds a lone UTF-16 surrogate",
        ),
        (  # the single-turn id searched with it: 58 ms at 8,000 characters, minutes at 1 MB
            {"question": "who directed " + "heat " * 400, "answer": "Michael Mann"},
            "field 'question' has 2,012 characters; it may have at most 2,000",
        ),
        (
            {"question": "Who directed Heat (1995)?", "answer": "Michael Mann " * 24},
            "field 'answer' has 311 characters; it may have at most 300 .no longer answer is read",
        ),
        (  # an answer is read from one line: the oracle's own gold scored 0
            {"question": "code word?", "answer": "alpha\nbeta", "answer_type": "text"},
            "field 'answer' spans more than one line",
        ),
        (
            {
                "question": "Who directed Heat (1995)?",
                "answer": "Michael Mann",
                "aliases": ["M"] * 101,
            },
            "field 'aliases' has 101 entries; it may have at most 100",
        ),
    ],
)
def test_text_a_task_cannot_hold_is_refused_at_load(
    tmp_path: Path, row: dict, message: str
) -> None:
    """A 5,000-digit alias made every step raise; a lone surrogate failed only when the run was written."""
    bad = _write(tmp_path / "t.jsonl", json.dumps(row))
    with pytest.raises(UserInputError, match=f"t.jsonl:1: {message}"):
        gym.make("MediaSearch-v0", tasks=str(bad))


def test_deep_json_is_a_bad_row_in_both_families(tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    media = _write(
        tmp_path / "q.jsonl",
        json.dumps({"question": "Who directed Inception?", "answer": "Christopher Nolan"}),
        deep,
    )
    with pytest.raises(UserInputError, match="q.jsonl:2: JSON nested too deeply"):
        gym.make("MediaSearch-v0", tasks=str(media))
    rare = _write(tmp_path / "p.jsonl", json.dumps(MARFAN), deep, '{"phenotypes": ["HP:0001166"]')
    with pytest.raises(UserInputError, match="2 bad rows") as err:
        gym.make("RareDiseaseDiagnosis-v0", tasks=str(rare))
    assert "p.jsonl:2: not valid JSON (nested too deeply)" in str(err.value)
    assert "p.jsonl:3: not valid JSON" in str(err.value)


def test_bad_json_lines_are_skipped_with_the_other_bad_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rare disease used to stop at the first line that was not JSON, even with --skip-bad-rows."""
    monkeypatch.setenv("AGENTENV_SKIP_BAD_ROWS", "1")
    rare = _write(tmp_path / "p.jsonl", json.dumps(MARFAN), '{"phenotypes": ["HP:0001166"]')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = gym.make("RareDiseaseDiagnosis-v0", tasks=str(rare))
    assert len(env.unwrapped.tasks) == 1


@pytest.mark.parametrize("env_id", ["MediaSearch-v0", "RareDiseaseDiagnosis-v0"])
def test_an_empty_tasks_path_names_no_file(env_id: str) -> None:
    """Rare disease read every case file under the working folder for tasks=''."""
    with pytest.raises(UserInputError, match="tasks='' names no file"):
        gym.make(env_id, tasks="")


def test_a_dangling_link_in_a_case_folder_is_named_not_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "cases"
    folder.mkdir()
    _write(folder / "a.jsonl", json.dumps(MARFAN))
    os.symlink(tmp_path / "nowhere.jsonl", folder / "b.jsonl")
    with pytest.raises(UserInputError, match=r"b.jsonl is not a regular file"):
        gym.make("RareDiseaseDiagnosis-v0", tasks=str(folder))


def test_many_notes_on_one_line_make_one_warning(tmp_path: Path) -> None:
    """2,000 unknown ids on one line were 2,000 warnings, each reprinting the 28 KB line."""
    row = dict(MARFAN, phenotypes=MARFAN["phenotypes"] + [f"HP:9{i:06d}" for i in range(2000)])
    rare = _write(tmp_path / "p.jsonl", json.dumps(row))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gym.make("RareDiseaseDiagnosis-v0", tasks=str(rare))
    mine = [w for w in caught if str(w.filename).endswith("p.jsonl")]
    assert len(mine) == 1 and "more such notes on this line" in str(mine[0].message)


@pytest.mark.parametrize("command", ["eval", "check-tasks"])
def test_an_empty_tasks_flag_is_an_argument_error(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentenv.cli.main import main

    with pytest.raises(SystemExit) as exit_:
        main([command, "RareDiseaseDiagnosis-v0", "--tasks", ""])
    assert exit_.value.code == 2
    assert "argument --tasks: an empty path names no file" in capsys.readouterr().err


def test_a_byte_order_mark_is_not_text(tmp_path: Path) -> None:
    """A file saved by a Windows editor starts with a BOM; it was refused in Python's words."""
    media = tmp_path / "q.jsonl"
    media.write_bytes(
        b"\xef\xbb\xbf" + json.dumps({"question": HEAT, "answer": "Heat (1995)"}).encode()
    )
    assert len(gym.make("MediaSearch-v0", tasks=str(media)).unwrapped.tasks) == 1
    rare = tmp_path / "p.jsonl"
    rare.write_bytes(b"\xef\xbb\xbf" + json.dumps(MARFAN).encode() + b"\n")
    assert len(gym.make("RareDiseaseDiagnosis-v0", tasks=str(rare)).unwrapped.tasks) == 1
