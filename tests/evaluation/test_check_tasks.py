"""``agentenv check-tasks``: own tasks are checked for solvability, not just for a gradeable gold."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from agentenv.cli.check_tasks import check_tasks
from agentenv.cli.main import main
from agentenv.envs.media_search.agents.oracle import MediaSearchOracle, OracleChecksOnlyTheGrader


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_media_tasks_reachable_only_when_the_tools_show_the_answer(tmp_path: Path) -> None:
    tasks = _write(
        tmp_path / "q.jsonl",
        [
            {"question": "Who directed Jaws?", "answer": "Steven Spielberg"},
            {"question": "Who is my favourite director?", "answer": "Agnès Varda"},
        ],
    )
    n, unreachable, skipped = check_tasks("MediaSearch-v0", tasks)
    assert n == 2 and not skipped
    assert [u[0] for u in unreachable] == [1]
    assert "'Agnès Varda' appears in none of the outputs" in unreachable[0][3]


def test_an_unreachable_row_is_named_by_its_own_id(tmp_path: Path, capsys) -> None:
    tasks = _write(
        tmp_path / "q.jsonl",
        [{"question": "Who is my favourite director?", "answer": "Agnès Varda", "id": "fav-1"}],
    )
    assert main(["check-tasks", "MediaSearch-v0", "--tasks", str(tasks)]) == 1
    assert "task 0 (line 1, row 'fav-1', task-" in capsys.readouterr().out


def test_an_unreachable_row_is_named_by_its_line_as_load_errors_name_it(
    tmp_path: Path, capsys
) -> None:
    """The 0-based task index named another row to a user counting lines from 1 (blank lines too)."""
    rows = [
        {"question": "Who directed Jaws?", "answer": "Steven Spielberg"},
        {"question": "Who is my favourite director?", "answer": "Agnès Varda"},
    ]
    tasks = tmp_path / "q.jsonl"
    tasks.write_text("\n" + json.dumps(rows[0]) + "\n\n  \n" + json.dumps(rows[1]) + "\n")
    assert main(["check-tasks", "MediaSearch-v0", "--tasks", str(tasks)]) == 1
    out = capsys.readouterr().out
    assert "task 1 (line 5, task-" in out and "favourite director" in out


def test_a_number_gold_in_words_is_looked_for_as_its_digits(tmp_path: Path) -> None:
    """The tools print numbers as digits; a gold written "one hundred and five" was reported
    unreachable where "105" was found."""
    tasks = _write(
        tmp_path / "q.jsonl",
        [
            {"question": "How long is Cold Comfort Farm (1995)?", "answer": "one hundred and five"},
            {"question": "How long is Heat (1995)?", "answer": "one hundred and five"},
        ],
    )
    n, unreachable, skipped = check_tasks("MediaSearch-v0", tasks)
    assert n == 2 and not skipped
    assert [u[0] for u in unreachable] == [1]  # Heat runs 170 minutes
    assert "the number 'one hundred and five' appears in none" in unreachable[0][3]


def test_rare_disease_out_of_universe_diagnosis_is_reported_and_fails(
    tmp_path: Path, capsys
) -> None:
    tasks = _write(
        tmp_path / "p.jsonl",
        [
            {
                "phenotypes": ["HP:0001166", "HP:0000545", "HP:0001519"],
                "diagnosis": ["OMIM:154700"],
            },
            {"phenotypes": ["HP:0001250"], "diagnosis": ["ORPHA:558"]},
        ],
    )
    assert main(["check-tasks", "RareDiseaseDiagnosis-v0", "--tasks", str(tasks)]) == 1
    out = capsys.readouterr().out
    assert "ORPHA:558" in out and "1 of 1 tasks reachable" in out


def test_rare_disease_excluded_ancestor_of_a_present_finding_is_a_warning(
    tmp_path: Path, capsys
) -> None:
    """The row, the excluded term and its present descendant are named; the row is still checked."""
    tasks = _write(
        tmp_path / "p.jsonl",
        [
            {"phenotypes": ["HP:0001166", "HP:0000545"], "diagnosis": ["OMIM:154700"]},
            {
                "phenotypes": ["HP:0001166", "HP:0000518"],
                "excluded": ["HP:0000478"],
                "diagnosis": ["OMIM:154700"],
            },
        ],
    )
    assert main(["check-tasks", "RareDiseaseDiagnosis-v0", "--tasks", str(tasks)]) == 1
    out = capsys.readouterr().out
    assert (
        f"import: {tasks}:2: excluded HP:0000478 (Abnormality of the eye) is an ancestor of "
        "present HP:0000518 (Cataract)" in out
    )
    assert "2 of 2 tasks reachable" in out and "1 import warning(s) above" in out


def test_all_reachable_exits_zero(tmp_path: Path, capsys) -> None:
    tasks = _write(
        tmp_path / "q.jsonl", [{"question": "Who directed Jaws?", "answer": "Steven Spielberg"}]
    )
    assert main(["check-tasks", "MediaSearch-v0", "--tasks", str(tasks)]) == 0
    assert "1 of 1 tasks reachable" in capsys.readouterr().out


def test_oracle_says_it_checks_only_the_grader_on_tasks_without_a_plan(tmp_path: Path) -> None:
    tasks = _write(
        tmp_path / "q.jsonl",
        [{"question": "Who is my favourite director?", "answer": "Agnès Varda"}],
    )
    env = gym.make("MediaSearch-v0", tasks=str(tasks))
    obs, info = env.reset(seed=0)
    with pytest.warns(
        OracleChecksOnlyTheGrader, match="checks only that the grader accepts the gold"
    ):
        MediaSearchOracle().reset(obs, info, task=env.unwrapped.task, rng=np.random.default_rng(0))
    planned = gym.make("MediaSearch-v0", split="test")
    obs, info = planned.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", OracleChecksOnlyTheGrader)
        MediaSearchOracle().reset(
            obs, info, task=planned.unwrapped.task, rng=np.random.default_rng(0)
        )


def test_no_false_alarm_on_the_casual_split(capsys) -> None:
    """Every hand-written casual question is reachable: the check reads it as an agent would
    (issue 30), and ``--split`` lets a reader check it as the env page says."""
    assert main(["check-tasks", "MediaSearch-v0", "--split", "casual"]) == 0
    out = capsys.readouterr().out
    assert re.fullmatch(r"(\d+) of \1 tasks reachable with the tools of MediaSearch-v0\n", out), out


def test_a_split_is_checked_by_name_and_a_wrong_one_is_named(capsys) -> None:
    assert main(["check-tasks", "RareDiseaseDiagnosis-v0", "--split", "real"]) == 0
    assert "500 of 500 tasks reachable" in capsys.readouterr().out
    assert main(["check-tasks", "MediaSearch-v0", "--split", "casul"]) == 2
    assert "split 'casul' (did you mean 'casual'?)" in capsys.readouterr().err
    for both_or_neither in (["--split", "test", "--tasks", "q.jsonl"], []):
        with pytest.raises(SystemExit) as exit_:
            main(["check-tasks", "MediaSearch-v0", *both_or_neither])
        assert exit_.value.code == 2 and "--tasks" in capsys.readouterr().err


def test_partial_names_are_followed_and_the_failed_step_is_named(tmp_path: Path) -> None:
    tasks = _write(
        tmp_path / "q.jsonl",
        [
            {"question": "how many films did spielberg direct in the 90s", "answer": "6"},
            {"question": "who directd goodfellas", "answer": "Martin Scorsese"},
            {"question": "how many films did my aunt make", "answer": "3"},
        ],
    )
    n, unreachable, _ = check_tasks("MediaSearch-v0", tasks)
    assert n == 3 and [u[0] for u in unreachable] == [2]
    reason = unreachable[0][3]
    assert (
        "search with" in reason and "find_person on ['aunt']" in reason and "found no one" in reason
    )


def test_famous_people_are_narrowed_and_mid_title_fragments_found(tmp_path: Path) -> None:
    """A famous actor has more films than are opened one by one: the check filters them by the genre and
    years named, and by the films two people share; a partial title may sit inside the title."""
    tasks = _write(
        tmp_path / "q.jsonl",
        [
            {
                "question": "what's the sci-fi movie from the 2000s with liam neeson",
                "answer": "Star Wars: Episode II – Attack of the Clones",
            },
            {
                "question": "who directed the movie Liam Neeson and Peter Dinklage were in",
                "answer": "Andrew Adamson",
            },
            {"question": "will rock director?", "answer": "Tim Robbins"},
        ],
    )
    n, unreachable, _ = check_tasks("MediaSearch-v0", tasks)
    assert n == 3 and unreachable == []
