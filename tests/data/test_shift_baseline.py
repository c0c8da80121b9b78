"""shift-check's no-shift baseline: grouped halves share no group, and a grouped split reads as no shift beyond it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentenv.data.shift_baseline import split_halves
from agentenv.data.shift_check import TaskRow, compare_rows, read_rows, shift_check


def write_rows(path: Path, tasks: list[Any], *, group: bool = True) -> Path:
    """MediaSearch task rows as docs/data-shift-check.md writes them, with each question's group."""
    rows = []
    for t in tasks:
        row = {"question": t.prompt, "kind": t.kind, "difficulty": t.difficulty}
        if group:
            row["group"] = t.case.group
        rows.append(json.dumps(row) + "\n")
    path.write_text("".join(rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def splits() -> dict[str, list[Any]]:
    return {
        s: list(gym.make("agentenv:MediaSearch-v0", split=s).unwrapped.tasks)
        for s in ("validation", "test")
    }


@settings(max_examples=200, deadline=None)
@given(
    groups=st.lists(st.sampled_from([f"g{i}" for i in range(30)]), min_size=1, max_size=120),
    seed=st.integers(0, 2**32 - 1),
)
def test_grouped_halves_partition_the_rows_and_share_no_group(groups: list[str], seed: int) -> None:
    (first, second), by = split_halves(groups, np.random.default_rng(seed))
    assert sorted([*first, *second]) == list(range(len(groups)))
    assert not {groups[i] for i in first} & {groups[i] for i in second}
    largest = max(groups.count(g) for g in set(groups))
    assert abs(len(first) - len(second)) <= largest
    assert by == f"'group' ({len(set(groups))} groups)"


def test_a_row_without_a_group_makes_the_halves_random() -> None:
    groups = ["a"] * 10 + [None] + ["b"] * 9
    (first, second), by = split_halves(groups, np.random.default_rng(0))
    assert by == "random rows" and (len(first), len(second)) == (10, 10)


def test_group_is_read_from_the_row_or_a_nested_task(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(
        '{"question": "who directed heat", "group": "tt0113277"}\n'
        '{"task": {"prompt": "who directed alien", "group": 7}}\n'
        '{"question": "who directed jaws", "group": ["not", "a", "label"]}\n',
        encoding="utf-8",
    )
    assert [r.group for r in read_rows(path)] == ["tt0113277", "7", None]


def test_a_grouped_split_reads_as_no_shift_beyond_its_groups(
    splits: dict[str, list[Any]], tmp_path: Path
) -> None:
    """Validation against test on the default questions: a moderate AUC, but two halves of validation
    split by film give as much, so the report reads it as what a grouped split gives by itself."""
    a = write_rows(tmp_path / "validation.jsonl", splits["validation"])
    b = write_rows(tmp_path / "test.jsonl", splits["test"])
    report = shift_check(a, b, seed=0, permutations=20)
    base = report.baseline
    assert base is not None and base.available and base.classifier is not None
    assert base.split_by.startswith("'group' (")
    assert report.classifier.auc > 0.55  # the splits ask about different films
    assert base.classifier.auc > 0.55  # and so do two halves of validation split by film
    assert report.classifier.auc <= base.classifier.ci_high
    assert "within what A's own halves give" in base.reading
    assert "no-shift baseline: A split in two by 'group'" in report.format()
    assert json.loads(json.dumps(report.to_dict()))["baseline"]["split_by"] == base.split_by


def test_a_holdout_of_one_kind_is_above_its_baseline(
    splits: dict[str, list[Any]], tmp_path: Path
) -> None:
    lookups = [t for t in splits["validation"] if t.kind == "lookup"]
    a = write_rows(tmp_path / "lookup.jsonl", lookups)
    b = write_rows(tmp_path / "test.jsonl", splits["test"])
    report = shift_check(a, b, seed=0, permutations=20)
    assert report.baseline is not None and report.baseline.classifier is not None
    assert report.classifier.auc > report.baseline.classifier.ci_high
    assert "above what A's own halves give" in report.baseline.reading


def test_without_groups_the_halves_are_random_rows_and_read_near_chance(
    splits: dict[str, list[Any]], tmp_path: Path
) -> None:
    a = write_rows(tmp_path / "validation.jsonl", splits["validation"], group=False)
    b = write_rows(tmp_path / "test.jsonl", splits["test"], group=False)
    report = shift_check(a, b, seed=0, permutations=20)
    base = report.baseline
    assert base is not None and base.split_by == "random rows" and base.classifier is not None
    assert base.classifier.ci_low < 0.5 < base.classifier.ci_high


def test_the_baseline_leaves_the_other_figures_as_they_were(splits: dict[str, list[Any]]) -> None:
    rows_a = [TaskRow(t.prompt, t.kind, t.difficulty, t.case.group) for t in splits["validation"]]
    rows_b = [TaskRow(t.prompt, t.kind, t.difficulty) for t in splits["test"]]
    with_base = compare_rows(rows_a, rows_b, seed=3, permutations=20)
    without = compare_rows(rows_a, rows_b, seed=3, permutations=20, baseline=False)
    assert without.baseline is None
    assert with_base.classifier == without.classifier and with_base.mmd == without.mmd


def test_halves_too_small_say_why() -> None:
    rows_a = [
        TaskRow(f"who directed film {i}", group="one" if i < 11 else "two") for i in range(12)
    ]
    rows_b = [TaskRow(f"which year did film {i} come out") for i in range(12)]
    report = compare_rows(rows_a, rows_b, seed=0, permutations=10)
    assert report.baseline is not None and not report.baseline.available
    assert "11 and 1 rows" in report.baseline.reason or "1 and 11 rows" in report.baseline.reason
    assert "not available" in report.format()
