"""A split's task-id index is built once per task list and machine, not once per env on its event loop."""

from __future__ import annotations

import time
from pathlib import Path

import gymnasium as gym
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.engine import task_index
from agentenv.engine.task_index import task_positions, warm_task_positions


@pytest.fixture
def fresh_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty task-id cache (the rest of the home's caches as they are) and no index in memory."""
    monkeypatch.setattr(task_index, "_INDEXES", type(task_index._INDEXES)())
    monkeypatch.setattr(task_index, "_task_ids_dir", lambda: tmp_path)
    return tmp_path


def test_envs_over_one_split_share_one_index_and_a_new_process_reads_it_back(
    fresh_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = gym.make("MediaSearch-v0", split="test").unwrapped
    two = gym.make("MediaSearch-v0", split="test").unwrapped
    target = one.tasks[7].id
    _, info = one.reset(options={"task_id": target})
    assert info["task_id"] == target
    assert task_positions(one.tasks) is task_positions(two.tasks)  # the same rows behind both
    assert list(fresh_home.glob("*.json"))
    # As a new process: nothing in memory; the index is read back, not rebuilt.
    monkeypatch.setattr(task_index, "_INDEXES", type(task_index._INDEXES)())
    monkeypatch.setattr(task_index, "_build_ids", lambda tasks: pytest.fail("rebuilt"))
    three = gym.make("MediaSearch-v0", split="test").unwrapped
    started = time.perf_counter()
    _, info = three.reset(options={"task_id": target})
    assert info["task_id"] == target
    assert time.perf_counter() - started < 0.5


def test_a_damaged_index_file_is_rebuilt(fresh_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = gym.make("MediaSearch-v0", split="test").unwrapped
    first = dict(task_positions(env.tasks))
    (path,) = fresh_home.glob("*.json")
    path.write_bytes(path.read_bytes()[:-40] + b"x" * 40)  # the body no longer matches its sha256
    monkeypatch.setattr(task_index, "_INDEXES", type(task_index._INDEXES)())
    assert task_positions(env.tasks) == first


def test_a_plain_list_of_tasks_keeps_an_index_of_its_own() -> None:
    from agentenv.engine.task import Task

    tasks = [Task(prompt=p, gold={"answer": p}) for p in ("a", "b")]
    assert task_positions(tasks) is None and warm_task_positions(tasks) is None


def test_warming_indexes_in_the_background(fresh_home: Path) -> None:
    env = gym.make("MediaSearch-v0", split="validation").unwrapped
    thread = warm_task_positions(env.tasks)
    assert thread is not None
    thread.join(60)
    assert not thread.is_alive()
    assert len(task_positions(env.tasks)) == len(env.tasks)
