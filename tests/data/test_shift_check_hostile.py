"""Hostile rows for ``agentenv data shift-check`` end in one line naming ``file:line`` (exit 2).

A probe found three tracebacks (exit 1): a row of 100,000 ``[`` (``RecursionError``), a label of
5,000 digits (Python's integer digit limit) and a lone surrogate ``"q\\ud800"``
(``UnicodeEncodeError`` when the text was embedded). And the MMD line printed a permutation
p-value of 1/100,001 as ``0.000``, a value a permutation test cannot give.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentenv.cli.main import main
from agentenv.data.shift_check import TaskRow, compare_rows
from agentenv.data.shift_rows import MAX_ROW_DEPTH, read_rows
from agentenv.errors import UserInputError

GOOD = [
    json.dumps(
        {
            "question": f"Who directed film number {i}?",
            "kind": "lookup",
            "difficulty": "easy",
            "group": f"g{i % 3}",
        }
    )
    for i in range(8)
]

BAD_ROWS = {
    "deep": ("[" * 100_000, "nested more than"),
    "deep-object": ('{"question": "q", "x": ' + "[" * 80 + "]" * 80 + "}", "nested more than"),
    "digits": ('{"question": "q", "group": ' + "9" * 5_000 + "}", "5,000 digits"),
    "surrogate": ('{"question": "q\\ud800"}', "text holds a lone UTF-16 surrogate"),
    "surrogate-kind": (
        '{"question": "q", "kind": "\\udc00"}',
        "kind holds a lone UTF-16 surrogate",
    ),
    "surrogate-chat": (
        '{"messages": [{"role": "user", "content": "x\\ud83d"}]}',
        "text holds a lone UTF-16 surrogate",
    ),
}


def _file(tmp_path: Path, name: str, bad: str | None = None) -> Path:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(GOOD + ([bad] if bad is not None else [])) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("case", list(BAD_ROWS))
def test_a_bad_row_is_named_by_file_and_line(tmp_path: Path, case: str) -> None:
    bad, said = BAD_ROWS[case]
    path = _file(tmp_path, case, bad)
    with pytest.raises(UserInputError, match=said) as err:
        read_rows(path)
    assert str(err.value).startswith(f"{path}:{len(GOOD) + 1}: ")
    assert len(str(err.value)) < 400 and "\n" not in str(err.value)


@pytest.mark.parametrize("case", list(BAD_ROWS))
def test_the_command_prints_one_line_and_exits_2(tmp_path: Path, case: str, capsys) -> None:
    a = _file(tmp_path, "a")
    b = _file(tmp_path, case, BAD_ROWS[case][0])
    code = main(["data", "shift-check", str(a), str(b), "--permutations", "20"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert f"{b}:{len(GOOD) + 1}:" in err


def test_nesting_up_to_the_bound_is_read(tmp_path: Path) -> None:
    """An SFT row's tool schemas nest; a row at the bound is a row."""
    deep = "[" * (MAX_ROW_DEPTH - 1) + "]" * (MAX_ROW_DEPTH - 1)
    path = _file(tmp_path, "ok", '{"question": "q", "tools": ' + deep + ', "group": 12}')
    assert read_rows(path)[-1] == TaskRow(text="q", group="12")


def test_a_permutation_p_value_is_printed_as_a_bound_and_stored_as_estimated() -> None:
    """(1 + count) / (1 + permutations), never 0: printed as ``< 0.001`` when no permutation is
    as extreme, and stored in the JSON as that estimate."""
    a = [TaskRow(f"Who directed the film Alien number {i}?", "lookup", "easy") for i in range(20)]
    b = [
        TaskRow(f"Which {1990 + i} film is longest of all?", "superlative", "hard")
        for i in range(20)
    ]
    report = compare_rows(a, b, seed=0, permutations=2_000)
    assert report.mmd.p_value == pytest.approx(1 / 2_001)
    assert report.to_dict()["mmd"]["p_value"] == report.mmd.p_value
    assert "permutation p < 0.001 (2000 permutations)" in report.format()
    assert "permutation p 0.000" not in report.format()
