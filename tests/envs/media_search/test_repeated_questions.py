"""A task file that asks one question twice fails at load, naming both lines.

Why: a task id hashes the question, so the two rows would share an id, and a
``task_id`` would grade one row's rollout against the other's answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.errors import UserInputError


def write_rows(path: Path, rows: list[dict[str, str]]) -> str:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return str(path)


def test_a_repeated_question_names_both_lines(tmp_path: Path) -> None:
    rows = [
        {"question": "Who directed Jaws?", "answer": "Steven Spielberg"},
        {"question": "Year of Jaws?", "answer": "1975"},
        {"question": "Who directed Jaws?", "answer": "Spielberg", "answer_type": "text"},
    ]
    path = write_rows(tmp_path / "q.jsonl", rows)
    with pytest.raises(
        UserInputError, match=r"q\.jsonl:3: the same question as .*q\.jsonl:1 \(different answers\)"
    ):
        gym.make("MediaSearch-v0", tasks=path)
    rows[2]["answer"] = "Steven Spielberg"
    with pytest.raises(UserInputError, match="the same answer"):
        gym.make("MediaSearch-v0", tasks=write_rows(tmp_path / "q.jsonl", rows))
    env = gym.make("MediaSearch-v0", tasks=write_rows(tmp_path / "q.jsonl", rows[:2]))
    assert len({env.unwrapped.tasks[i].id for i in range(2)}) == 2
