"""Task-file bounds hold while a file is read, not only as ``stat`` saw it before the read.

Why: every reader checked the size with ``stat`` (:func:`check_task_source`) and then opened the
file again and read it whole, so a file that grew in between, or whose ``st_size`` says 0 (a
``/proc`` file behind a link), escaped the bound. Here a file grows right after the check passes,
and each reader must refuse it with the check's own message, having read at most the bound + 1.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase, load_hpo_kb
from agentenv.data import shift_rows
from agentenv.engine import task_files
from agentenv.envs.media_search.tasks import user_tasks
from agentenv.envs.rare_disease.tasks import phenopackets, user_patients
from agentenv.errors import UserInputError
from agentenv.rewards import files as reward_files

LIMIT = 4096
"""The size bound these tests set, so that growing past it costs kilobytes, not 256 MiB."""
TOO_LARGE = r"larger than 0 MiB; split the task set"  # LIMIT >> 20 is 0


@pytest.fixture(scope="module")
def kb() -> HpoKnowledgeBase:
    return load_hpo_kb()


@pytest.fixture(autouse=True)
def small_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(task_files, "MAX_TASK_FILE_BYTES", LIMIT)


def _question_rows(start: int, n: int) -> str:
    return "".join(
        json.dumps({"question": f"Who directed film number {i}?", "answer": "Michael Mann"}) + "\n"
        for i in range(start, start + n)
    )


def _patient_rows(start: int, n: int) -> str:
    return "".join(
        json.dumps({"phenotypes": ["HP:0001166"], "diagnosis": ["OMIM:154700"], "id": f"c{i}"})
        + "\n"
        for i in range(start, start + n)
    )


def _growing(
    monkeypatch: pytest.MonkeyPatch, module: Any, file: Path, more: str
) -> Callable[..., None]:
    """Make ``module``'s ``check_task_source`` append ``more`` to ``file`` once the check has passed:
    the file grows between the check and the read, as one being written does."""
    check = task_files.check_task_source

    def check_then_grow(*args: Any, **kwargs: Any) -> None:
        check(*args, **kwargs)
        with file.open("a", encoding="utf-8") as f:
            f.write(more)

    monkeypatch.setattr(module, "check_task_source", check_then_grow)
    return check_then_grow


def test_media_search_reader_refuses_a_file_that_grew_after_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(_question_rows(0, 2), encoding="utf-8")
    assert len(user_tasks.load_user_tasks(path)) == 2  # within the bound: read as before
    _growing(monkeypatch, user_tasks, path, _question_rows(2, 200))
    with pytest.raises(UserInputError, match=rf"^tasks {path}: {TOO_LARGE}$"):
        user_tasks.load_user_tasks(path)


def test_rare_disease_readers_refuse_a_file_or_folder_that_grew_after_the_check(
    kb: HpoKnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(_patient_rows(0, 1), encoding="utf-8")
    assert len(user_patients.load_user_patients(kb, path).patients) == 1
    _growing(monkeypatch, user_patients, path, _patient_rows(1, 100))
    with pytest.raises(UserInputError, match=rf"^tasks {path}: {TOO_LARGE}$"):
        user_patients.load_user_patients(kb, path)

    folder = tmp_path / "cases"
    folder.mkdir()
    packet = {
        "id": "p",
        "phenotypicFeatures": [{"type": {"id": "HP:0001166", "label": "x"}}],
        "interpretations": [{"id": "i", "diagnosis": {"disease": {"id": "OMIM:154700"}}}],
    }
    (folder / "a.json").write_text(json.dumps(packet, indent=1), encoding="utf-8")
    (folder / "b.jsonl").write_text("", encoding="utf-8")
    # each file stays within the bound; together, once b.jsonl grows, they pass it
    _growing(monkeypatch, user_patients, folder / "b.jsonl", " " * (LIMIT - 100) + "\n")
    with pytest.raises(UserInputError, match=rf"^tasks {folder}: {TOO_LARGE}$"):
        user_patients.load_user_patients(kb, folder)


def test_load_phenopackets_reads_within_the_bound(kb: HpoKnowledgeBase, tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_text("{\n" + " " * LIMIT + '\n"id": "p"}', encoding="utf-8")
    with pytest.raises(UserInputError, match=rf"^tasks {big}: {TOO_LARGE}$"):
        phenopackets.load_phenopackets(kb, big)


def test_shift_check_reader_refuses_a_file_that_grew_after_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"text": "a"}\n', encoding="utf-8")
    assert len(shift_rows.read_rows(path)) == 1
    _growing(monkeypatch, shift_rows, path, '{"text": "b"}\n' * 500)
    with pytest.raises(UserInputError, match=rf"^data set {path}: {TOO_LARGE}$"):
        shift_rows.read_rows(path)


def test_check_task_source_counts_what_it_reads_when_st_size_lies(tmp_path: Path) -> None:
    link = tmp_path / "tasks.jsonl"
    os.symlink("/proc/self/status", link)  # a regular file by stat, of size 0, ~1.5 KB of text
    assert link.stat().st_size == 0
    task_files.check_task_source(link)  # within 4 KiB
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(task_files, "MAX_TASK_FILE_BYTES", 64)
        with pytest.raises(UserInputError, match=rf"^tasks {link}: {TOO_LARGE}$"):
            task_files.check_task_source(link)


def test_a_reader_never_reads_more_than_the_bound_plus_one(tmp_path: Path) -> None:
    huge = tmp_path / "huge.jsonl"
    huge.write_text(("x" * 99 + "\n") * (20 * LIMIT // 100), encoding="utf-8")
    reads = task_files.TaskSourceReads(huge)
    with pytest.raises(UserInputError, match=TOO_LARGE), reads.open(huge) as fh:
        for _ in fh:
            pass
    assert reads.total == LIMIT + 1
    # a line past its bound is refused as it is read, with the check's message
    long = tmp_path / "long.jsonl"
    long.write_text("short\n" + "x" * 99 + "\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(task_files, "MAX_TASK_LINE_BYTES", 50)
        reads = task_files.TaskSourceReads(long)
        with pytest.raises(UserInputError, match="a line longer than 0 MiB; one task per line"):
            with reads.open(long) as fh:
                fh.readline()


def test_a_normal_file_reads_as_open_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    raw = '\ufeff{"a": 1}\r\n{"b": "é"}\r\rlast'.encode()
    path.write_bytes(raw)
    with path.open(encoding="utf-8-sig") as fh:
        expected = list(fh)
    reads = task_files.TaskSourceReads(path)
    with reads.open(path) as fh:
        assert list(fh) == expected
    assert reads.total == len(raw)


def test_reward_file_bound_holds_when_st_size_lies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reward_files, "MAX_REWARD_FILE_BYTES", 256)
    link = tmp_path / "reward.json"
    os.symlink("/proc/self/status", link)  # stat: 0 bytes; read: ~1.5 KB
    with pytest.raises(ValueError, match=r"more than 256 bytes; a reward config is at most 256"):
        reward_files.read_reward_file(link)
    small = tmp_path / "ok.json"
    small.write_text('{"preset": "efficient"}', encoding="utf-8")
    assert reward_files.read_reward_file(small) == {"preset": "efficient"}
    big = tmp_path / "big.json"
    big.write_text("{" + " " * 300 + "}", encoding="utf-8")
    with pytest.raises(ValueError, match=r"big\.json: 302 bytes; a reward config is at most 256"):
        reward_files.read_reward_file(big)
