"""``agentenv reproduce`` writes as ``eval`` does: an existing run is refused unless --overwrite, a
replaced run comes back whole if the new one stops, and ``--quick`` is labelled a smoke run.

The lesson itself is replaced here by a writer that leaves what a lesson leaves (a summary and a
run folder), so these tests check the command's output rules in milliseconds; the lessons' own
end-to-end runs are in tests/structured and tests/scratch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentenv.cli.main import main
from agentenv.evaluation.lesson_runs import MARKER, SMOKE_NOTE

SUMMARY = {
    "strict": {"accuracy": 0.25, "accuracy_ci": [0.1, 0.4], "per_seed": [{"seed": 0}]},
    "effects": {"a_minus_b": {"mean": 0.1, "ci": [-0.2, 0.3]}},
    "meta": {"wall_s": 3.0},
}


@pytest.fixture
def lesson(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Replace the structured lessons' runner with one that writes a lesson's files; record each call's folder."""
    import agentenv.lessons.structured.lessons as lessons

    calls: list[Path] = []

    def run_lesson(name: str, out: Path, **_: Any) -> dict[str, Any]:
        calls.append(out)
        (out / "runs").mkdir(parents=True, exist_ok=True)
        (out / "runs" / "new.txt").write_text("new", encoding="utf-8")
        (out / "summary.json").write_text(json.dumps(SUMMARY), encoding="utf-8")
        return dict(SUMMARY)

    monkeypatch.setattr(lessons, "run_lesson", run_lesson)
    return calls


def _old_run(out: Path) -> Path:
    (out / "runs").mkdir(parents=True)
    (out / "runs" / "old.txt").write_text("old", encoding="utf-8")
    (out / "summary.json").write_text('{"old": true}', encoding="utf-8")
    return out


def test_a_folder_holding_a_run_is_refused_in_one_line(
    lesson: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _old_run(tmp_path / "run")
    assert main(["reproduce", "reward-hacking", "--quick", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        len(err) == 1
        and "already holds a run; pass --overwrite" in err[0]
        and "Traceback" not in err[0]
    )
    assert lesson == [] and json.loads((out / "summary.json").read_text()) == {"old": True}
    assert main(["reproduce", "reward-hacking", "--out", str(out / "summary.json")]) == 2
    assert "is a file" in capsys.readouterr().err


def test_quick_is_labelled_a_smoke_run_in_the_summary_and_the_output(
    lesson: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert main(["reproduce", "reward-hacking", "--quick", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary)[:2] == ["smoke_run", "smoke_note"] and summary["smoke_run"] is True
    assert summary["smoke_note"] == SMOKE_NOTE and "not results" in SMOKE_NOTE
    printed = capsys.readouterr().out.splitlines()
    assert (
        printed[0].startswith("SMOKE RUN (reward-hacking): --quick is a smoke run")
        and "not results" in printed[0]
    )
    assert "accuracy 0.250 [0.100, 0.400]" in printed[1] and "effects/a_minus_b" in printed[2]
    assert (
        printed[-1].endswith("(smoke run: not results)") and len(printed) == 4
    )  # a table, not 100 lines of JSON
    assert main(["reproduce", "reward-hacking", "--out", str(tmp_path / "full")]) == 0
    assert json.loads((tmp_path / "full" / "summary.json").read_text())["smoke_run"] is False
    assert "SMOKE" not in capsys.readouterr().out


def test_overwrite_replaces_the_whole_run(lesson: list[Path], tmp_path: Path) -> None:
    out = _old_run(tmp_path / "run")
    assert main(["reproduce", "reward-hacking", "--quick", "--overwrite", "--out", str(out)]) == 0
    assert sorted(p.name for p in (out / "runs").iterdir()) == ["new.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["run"]  # nothing left aside
    assert json.loads((out / MARKER).read_text()) == {
        "command": "agentenv reproduce",
        "lesson": "reward-hacking",
        "quick": True,
    }


def test_overwrite_never_replaces_a_folder_that_is_not_a_run(
    lesson: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "code.py").write_text("x = 1\n", encoding="utf-8")
    assert main(["reproduce", "reward-hacking", "--overwrite", "--out", str(project)]) == 2
    assert "holds files that are not an agentenv run" in capsys.readouterr().err
    assert (project / "src" / "code.py").read_text() == "x = 1\n" and lesson == []


def test_an_interrupted_overwrite_gives_the_old_run_back(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import agentenv.lessons.structured.lessons as lessons

    def interrupted(name: str, out: Path, **_: Any) -> dict[str, Any]:
        (out / "runs").mkdir(parents=True, exist_ok=True)
        (out / "runs" / "partial.txt").write_text("partial", encoding="utf-8")
        raise KeyboardInterrupt

    monkeypatch.setattr(lessons, "run_lesson", interrupted)
    out = _old_run(tmp_path / "run")
    assert main(["reproduce", "reward-hacking", "--overwrite", "--out", str(out)]) == 130
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert sorted(p.name for p in (out / "runs").iterdir()) == ["old.txt"]
    assert json.loads((out / "summary.json").read_text()) == {"old": True}
    assert [p.name for p in tmp_path.iterdir()] == ["run"]
