"""``agentenv data shift-check``: same-distribution task sets pass, shifted ones are caught, bad files are named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from agentenv.cli.data import main as shift_main
from agentenv.data.shift_check import (
    ShiftReport,
    auc_delong,
    js_divergence,
    read_rows,
    shift_check,
)
from agentenv.data.text_embedding import HashedNgramEmbedder
from agentenv.errors import UserInputError


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def task_row(task: Any) -> dict[str, Any]:
    """A MediaSearch task-file row (``question``, ``kind``, ``difficulty``)."""
    return {"question": task.prompt, "kind": task.kind, "difficulty": task.difficulty}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real MediaSearch tasks: two disjoint random halves of validation, validation lookup-only, test."""
    out = tmp_path_factory.mktemp("shift")
    val = list(gym.make("agentenv:MediaSearch-v0", split="validation").unwrapped.tasks)
    test = list(gym.make("agentenv:MediaSearch-v0", split="test").unwrapped.tasks)
    order = np.random.default_rng(123).permutation(len(val))
    half = len(val) // 2
    return {
        "half1": write_jsonl(out / "half1.jsonl", [task_row(val[i]) for i in order[:half]]),
        "half2": write_jsonl(out / "half2.jsonl", [task_row(val[i]) for i in order[half:]]),
        "lookup": write_jsonl(
            out / "lookup.jsonl", [task_row(t) for t in val if t.kind == "lookup"]
        ),
        "test": write_jsonl(out / "test.jsonl", [task_row(t) for t in test]),
    }


@pytest.fixture(scope="module")
def same(files: dict[str, Path]) -> ShiftReport:
    return shift_check(files["half1"], files["half2"], seed=0)


@pytest.fixture(scope="module")
def shifted(files: dict[str, Path]) -> ShiftReport:
    return shift_check(files["lookup"], files["test"], seed=0)


def test_same_distribution_is_indistinguishable(same: ShiftReport) -> None:
    # Random halves of one split: no large shift. Any fixed pair of halves is one draw, and a test at
    # level 0.05 flags one draw in twenty (these halves of the current questions: classifier AUC 0.55,
    # MMD p 0.045), so "slight" is allowed, "large" is not, and the bounds are set at the 1% level.
    c = same.classifier
    assert c.auc < 0.6, c
    assert c.ci_low < 0.55, c
    assert c.n_per_side == 500 and c.folds == 5
    assert "large" not in c.interpretation, c
    assert same.kind.available and same.kind.js_divergence < 0.03
    assert same.difficulty.available and same.difficulty.js_divergence < 0.03
    assert same.mmd.p_value > 0.01  # exact under exchangeability: a 1% false alarm per question set
    assert "large" not in same.format()


def test_lookup_only_versus_all_kinds_is_a_large_shift(shifted: ShiftReport) -> None:
    c = shifted.classifier
    assert c.auc > 0.8 and c.ci_low > 0.5 and c.p_value < 0.001
    assert c.n_per_side == 200  # the larger set is subsampled to the smaller
    assert shifted.kind.js_divergence > 0.5 and shifted.kind.total_variation == pytest.approx(0.8)
    assert shifted.kind.counts_a["lookup"] == 200 and shifted.kind.counts_a["count"] == 0
    assert shifted.mmd.p_value < 0.01
    assert shifted.mmd.n_a == 200 and shifted.mmd.n_b == 1000


def test_same_seed_same_report_and_json(
    files: dict[str, Path], shifted: ShiftReport, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"
    assert (
        shift_main(
            ["shift-check", str(files["lookup"]), str(files["test"]), "--json", "--out", str(out)]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    assert (
        printed
        == json.loads(out.read_text(encoding="utf-8"))
        == json.loads(json.dumps(shifted.to_dict()))
    )


def test_other_seed_other_subsample(files: dict[str, Path], shifted: ShiftReport) -> None:
    other = shift_check(files["lookup"], files["test"], seed=1, permutations=20)
    assert other.classifier.auc != shifted.classifier.auc
    assert other.classifier.auc > 0.8


def test_sft_chat_rows_are_read(tmp_path: Path) -> None:
    """Rows as ``agentenv export-sft`` writes them: the text is the first user message; no kind, no difficulty."""
    tasks = list(gym.make("agentenv:MediaSearch-v0", split="validation").unwrapped.tasks)[:60]
    chat = [
        {
            "messages": [
                {"role": "system", "content": "You answer questions about films."},
                {"role": "user", "content": t.prompt},
                {"role": "assistant", "content": "", "tool_calls": []},
            ],
            "tools": [{"type": "function", "function": {"name": "search"}}],
        }
        for t in tasks
    ]
    nested = [{"task": {"prompt": t.prompt, "kind": t.kind}} for t in tasks]
    a = write_jsonl(tmp_path / "chat.jsonl", chat)
    b = write_jsonl(tmp_path / "nested.jsonl", nested)
    rows = read_rows(a)
    assert [r.text for r in rows] == [t.prompt for t in tasks] and rows[0].kind is None
    assert read_rows(b)[0].kind == tasks[0].kind
    report = shift_check(a, b, seed=0, permutations=20)
    assert not report.kind.available and "chat.jsonl" in report.kind.reason
    assert not report.difficulty.available
    assert report.classifier.auc < 0.6  # the same prompts on both sides
    text = report.format()
    assert "kind: not available" in text and "difficulty: not available" in text


@pytest.mark.parametrize(
    ("content", "where", "says"),
    [
        ('{"question": "Who directed Alien?"}\nnot json\n', ":2:", "not valid JSON"),
        ('{"question": "Who directed Alien?"}\n\n{"kind": "lookup"}\n', ":3:", "no text"),
        ("[1, 2]\n", ":1:", "not an object"),
        ('{"messages": [{"role": "system", "content": "x"}]}\n', ":1:", "user message"),
        ("", "", "no rows"),
    ],
)
def test_bad_input_names_file_and_line(tmp_path: Path, content: str, where: str, says: str) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content, encoding="utf-8")
    with pytest.raises(UserInputError) as err:
        read_rows(bad)
    assert f"{bad}{where}" in str(err.value) and says in str(err.value)
    assert "expected" in str(err.value) or "the text of a chat row" in str(err.value)


def test_missing_file_exits_2_with_its_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", [{"prompt": "Who directed Alien?"}])
    missing = tmp_path / "missing.jsonl"
    assert shift_main(["shift-check", str(good), str(missing)]) == 2
    assert f"{missing}: no such file" in capsys.readouterr().err


def test_a_file_too_short_for_the_classifier_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    short = write_jsonl(
        tmp_path / "short.jsonl", [{"prompt": f"Who directed film {i}?"} for i in range(3)]
    )
    long = write_jsonl(
        tmp_path / "long.jsonl", [{"prompt": f"How long is film {i}?"} for i in range(9)]
    )
    assert shift_main(["shift-check", str(long), str(short)]) == 2
    assert f"{short}: 3 rows; the classifier test needs at least 5" in capsys.readouterr().err


def test_building_blocks() -> None:
    assert js_divergence(np.array([3, 0]), np.array([0, 5])) == 1.0
    assert js_divergence(np.array([1, 2]), np.array([2, 4])) == 0.0
    assert auc_delong(np.array([0.1, 0.2, 0.8, 0.9]), np.array([1, 1, 0, 0]))[0] == 0.0
    assert auc_delong(np.array([0.5, 0.5]), np.array([1, 0]))[0] == 0.5
    emb = HashedNgramEmbedder(dim=512)
    X1 = emb.fit_transform(["Who directed Alien?", "How long is Heat?"])
    X2 = HashedNgramEmbedder(dim=512).fit_transform(["Who directed Alien?", "How long is Heat?"])
    assert (X1 != X2).nnz == 0  # deterministic across instances (no salted hash)
    assert np.allclose(np.asarray(X1.multiply(X1).sum(axis=1)).ravel(), 1.0)


def test_a_device_is_refused_before_it_is_read(tmp_path) -> None:
    """A link to /dev/zero was read until the kernel killed the process at 24 GB."""
    import os

    from agentenv.data.shift_rows import read_rows
    from agentenv.errors import UserInputError

    zero = tmp_path / "zero.jsonl"
    os.symlink("/dev/zero", zero)
    with pytest.raises(UserInputError, match="not a regular file"):
        read_rows(zero)
