"""``agentenv play --tasks``: a person plays a task of their own file, graded against its gold, before an
eval runs on it; a file or env that cannot be played is one ``agentenv: error:`` line, exit 2."""

from __future__ import annotations

import io
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentenv.cli.main import main
from agentenv.errors import UserInputError
from agentenv.play.session import play

from .test_play import Script, component

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SECRET = {
    "question": "What is the film club's secret word?",
    "answer": "swordfish",
    "answer_type": "text",
}
"""A gold no catalog knows: only the file's own row can credit ``swordfish``."""
MARFAN = {
    "phenotypes": ["HP:0001166", "HP:0000545", "HP:0001519"],
    "diagnosis": ["OMIM:154700"],
    "id": "marfan-1",
}


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    return write_rows(tmp_path / "mine.jsonl", [SECRET])


def shown_question(out: str) -> str:
    """The task text between the two rules of the start screen."""
    match = re.search(r"^-{40}\n(.*?)\n-{40}$", out, re.MULTILINE | re.DOTALL)
    assert match, out
    return match.group(1)


@pytest.mark.parametrize(("answer", "accuracy"), [("swordfish", 1), ("Jaws", 0)])
def test_media_search_task_file_is_graded_against_its_gold(
    secret_file: Path, capsys, answer: str, accuracy: int
) -> None:
    assert play("MediaSearch-v0", tasks=secret_file, seed=0, read=Script([f"answer {answer}"])) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"== MediaSearch-v0, a task of {secret_file}\n")
    assert shown_question(out) == SECRET["question"]
    assert f"Game over. Reward: {accuracy}" in out and component(out, "accuracy") == accuracy
    assert re.search(r"^Gold:\n  answer: swordfish\n", out, re.MULTILINE)


def test_seed_picks_a_task_of_the_file_as_it_does_of_a_split(tmp_path: Path, capsys) -> None:
    rows = [SECRET, {"question": "Who directed Jaws?", "answer": "Steven Spielberg"}]
    path = write_rows(tmp_path / "two.jsonl", rows)

    def question(seed: int) -> str:
        play("MediaSearch-v0", tasks=path, seed=seed, read=Script([]))  # EOF at once: no turn
        return shown_question(capsys.readouterr().out)

    shown = [question(seed) for seed in range(8)]
    assert set(shown) == {r["question"] for r in rows}  # every row reachable, nothing else served
    assert question(3) == shown[3]  # a seed names one task of the file


@pytest.mark.parametrize(
    ("env_id", "lines"),
    [
        ("RareDiseaseDiagnosis-v0", ["answer OMIM:154700"]),
        ("DiagnosisDialogue-v0", ["say Do you have long fingers?", "answer Marfan syndrome"]),
    ],
)
def test_rare_disease_task_file_is_graded_against_its_gold(
    tmp_path: Path, capsys, env_id: str, lines: list[str]
) -> None:
    path = write_rows(tmp_path / "cases.jsonl", [MARFAN])
    assert play(env_id, tasks=path, seed=0, read=Script(lines)) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"== {env_id}, a task of {path}")
    assert "HP:0001519 Disproportionate tall stature" in out  # the file's patient
    assert component(out, "accuracy") == 1 and component(out, "hit@1") == 1
    assert re.search(
        r"^Gold:\n  diagnosis: OMIM:154700\n  name: Marfan syndrome$", out, re.MULTILINE
    )


def test_cli_plays_the_file_whatever_split_is_given(
    secret_file: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As ``agentenv eval``: ``--split`` is checked, and the file's tasks are played instead of it."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("answer swordfish\n"))
    argv = ["play", "MediaSearch-v0", "--tasks", str(secret_file), "--seed", "0"]
    assert main([*argv, "--split", "test"]) == 0
    out = capsys.readouterr().out
    assert shown_question(out) == SECRET["question"] and component(out, "accuracy") == 1
    assert main([*argv, "--split", "real"]) == 2
    assert "split 'real' is not one of MediaSearch-v0's" in capsys.readouterr().err


def one_error_line(argv: list[str], capsys) -> str:
    """The message of a refused ``agentenv`` command, which must be exit 2 and one line."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err
    assert captured.err.startswith("agentenv: error: "), captured.err
    return captured.err.removeprefix("agentenv: error: ").rstrip("\n")


@pytest.mark.parametrize(
    ("make_path", "message"),
    [
        (lambda d: d / "missing.jsonl", r"^--tasks .*missing\.jsonl: no such file or directory$"),
        (
            lambda d: (d / "empty").mkdir() or d / "empty",
            r"^--tasks .*empty: the folder holds no files",
        ),
        (
            lambda d: write_rows((d / "cases").mkdir() or d / "cases" / "c.jsonl", [MARFAN]).parent,
            r"cases: is a directory; MediaSearch --tasks takes one JSONL file",
        ),
        (
            lambda d: write_rows(d / "bad.jsonl", [{"question": "Q?"}]),
            r"bad\.jsonl:1: missing field 'answer'; every row needs 'question' and 'answer'",
        ),
    ],
    ids=["missing file", "empty folder", "folder", "malformed row"],
)
def test_a_bad_task_source_is_one_line(tmp_path: Path, capsys, make_path, message: str) -> None:
    path = make_path(tmp_path)
    assert re.search(
        message, one_error_line(["play", "MediaSearch-v0", "--tasks", str(path)], capsys)
    )


def test_a_dialogue_that_reads_no_task_file_is_refused_before_it_is_built(
    secret_file: Path, capsys
) -> None:
    """MediaConcierge-v0 builds its tasks from the split: ``tasks=`` was Python's ``got multiple values``."""
    refusal = (
        "--tasks: MediaConcierge-v0 reads no task file of yours (its env takes no 'tasks' keyword); "
        "use --split train/validation/test/casual instead, or play your tasks on MediaSearch-v0"
    )
    assert (
        one_error_line(["play", "MediaConcierge-v0", "--tasks", str(secret_file)], capsys)
        == refusal
    )
    with pytest.raises(UserInputError, match=re.escape(refusal)):
        play("MediaConcierge-v0", tasks=secret_file, read=Script([]))


@pytest.fixture
def capitals_importable(tmp_path: Path) -> Iterator[None]:
    """``examples/`` on sys.path for the example family; afterwards it is gone again, so no other test sees it."""
    from agentenv.families import unregister_family

    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(EXAMPLES))
        mp.setenv("AGENTENV_HOME", str(tmp_path / "agentenv_home"))
        yield
    unregister_family("capitals")
    for name in [m for m in sys.modules if m == "capitals" or m.startswith("capitals.")]:
        del sys.modules[name]


def test_a_family_reading_its_task_file_with_the_generic_reader_plays_its_row(
    capitals_importable: None, tmp_path: Path, capsys
) -> None:
    """The example family reads ``tasks=`` with :func:`agentenv.engine.task_rows.read_task_rows` (a
    family whose env takes no ``tasks`` keyword is refused as eval refuses it:
    tests/examples/test_capitals_tasks.py)."""
    rows = write_rows(
        tmp_path / "capitals.jsonl", [{"question": "Capital of Peru?", "answer": "Lima"}]
    )
    assert (
        play("capitals.family:Capitals-v0", tasks=rows, seed=0, read=Script(["answer lima"])) == 0
    )
    out = capsys.readouterr().out
    assert shown_question(out) == "Capital of Peru?" and component(out, "accuracy") == 1
