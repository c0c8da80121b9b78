"""A task row's ``id`` reaches each episode record as ``row_id``, so results trace back to the row.

The docs said a MediaSearch row's id "becomes the question's id", but no result carried it: every
record named the task by its content hash (``task_id``) only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentenv.cli.main import main

ROWS = {
    "MediaSearch-v0": [
        {"question": "Who directed Heat (1995)?", "answer": "Michael Mann", "id": "q-heat"},
        {"question": "What year was Inception released?", "answer": "2010"},
    ],
    "RareDiseaseDiagnosis-v0": [
        {
            "phenotypes": ["HP:0000518", "HP:0001166", "HP:0001519"],
            "diagnosis": ["OMIM:154700"],
            "id": "case 7",
        },
        {"phenotypes": ["HP:0001250", "HP:0001263"], "diagnosis": ["OMIM:308300"]},
    ],
}


@pytest.mark.parametrize("env_id", sorted(ROWS))
def test_a_rows_id_is_in_its_episode_records_and_a_row_without_one_has_none(
    env_id: str, tmp_path: Path
) -> None:
    tasks = tmp_path / "mine.jsonl"
    tasks.write_text("".join(json.dumps(r) + "\n" for r in ROWS[env_id]), encoding="utf-8")
    out = tmp_path / "run"
    args = ["eval", env_id, "--agent", "oracle", "--tasks", str(tasks), "--episodes", "4"]
    assert main([*args, "--no-progress", "--out", str(out)]) == 0
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    by_index = {r["task_index"]: r.get("row_id") for r in records}
    assert by_index == {0: ROWS[env_id][0]["id"], 1: None}
    assert all(r["task_id"].startswith("task-") for r in records)  # still the content hash


def test_a_splits_tasks_carry_no_row_id() -> None:
    import gymnasium as gym

    for env_id in ROWS:
        tasks = gym.make(env_id).unwrapped.tasks
        assert [tasks[i].row_id for i in range(3)] == ["", "", ""]
