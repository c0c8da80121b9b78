"""The generic task-row reader (:mod:`agentenv.engine.task_rows`) keeps the README's ``--tasks`` promises.

Why: a family that reads its task file through ``read_task_rows`` must get what the shipped
families give: every bad row named as ``path:line`` with its field, ``--skip-bad-rows`` keeping the
good rows, a repeated question refused naming both rows, and nothing but a
:class:`~agentenv.errors.UserInputError` for any input, however odd.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentenv.engine import task_files
from agentenv.engine.task import Task
from agentenv.engine.task_files import SKIP_BAD_ROWS_ENV, skipped_rows
from agentenv.engine.task_rows import check_row_fields, read_task_rows
from agentenv.errors import UserInputError

EXAMPLE = '{"question": "What is the capital of Peru?", "answer": "Lima"}'


def row_to_task(row: Mapping[str, Any], where: str) -> Task:
    """A family's row function: a question and an answer, both non-empty strings."""
    check_row_fields(
        row, where, required=("question", "answer"), optional=("kind",), example=EXAMPLE
    )
    for name in ("question", "answer"):
        if not isinstance(row[name], str) or not row[name].strip():
            raise UserInputError(f"{where}: field {name!r} must be a non-empty string")
    return Task(prompt=row["question"].strip(), gold=row["answer"], row_id=row.get("id", ""))


def read(source: Any) -> list[Task]:
    return read_task_rows(source, row_to_task, example=EXAMPLE)


def write(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def good(question: str, **extra: Any) -> str:
    return json.dumps({"question": question, "answer": "A", **extra})


@pytest.fixture(autouse=True)
def not_skipping(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SKIP_BAD_ROWS_ENV, raising=False)


def test_a_file_of_good_rows_is_read_in_order_with_blank_lines_a_bom_and_crlf(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.jsonl"
    text = "\ufeff" + good("Q1?", id="first") + "\r\n\r\n   \n" + good("Q2?") + "\n"
    path.write_text(text, encoding="utf-8", newline="")
    tasks = read(path)
    assert [(t.prompt, t.row_id) for t in tasks] == [("Q1?", "first"), ("Q2?", "")]
    assert read(str(path))[0].id == tasks[0].id


def test_every_bad_row_is_named_by_path_line_and_field(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.jsonl",
        good("Q1?", id="a"),  # 1: good
        "[1, 2]",  # 2: a list
        "7",  # 3: a number
        '{"question": "Q4?", "answer": ',  # 4: invalid JSON
        "[" * 100_000 + "]" * 100_000,  # 5: nested too deeply
        '{"question": "Q6?", "answer": "A", "answer": "B"}',  # 6: a key twice
        good("Q7?", id=7),  # 7: a bad id
        good("Q8?", id="a"),  # 8: another row's id
        '{"question": "Q9?", "anwser": "A"}',  # 9: a misspelt field
        '{"question": "Q10?"}',  # 10: a missing field
        '{"question": "Q11?", "answer": 11}',  # 11: the family's refusal
    )
    with pytest.raises(UserInputError) as err:
        read(path)
    lines = str(err.value).splitlines()
    assert (
        lines[0]
        == f"{path}: 10 bad rows (fix them, or agentenv eval --skip-bad-rows keeps the rest):"
    )
    expected = [
        (2, "expected a JSON object like"),
        (3, "expected a JSON object like"),
        (4, "invalid JSON (Expecting value at column"),
        (5, "JSON nested too deeply"),
        (6, "the key 'answer' appears twice"),
        (7, "field 'id' must be a string"),
        (8, "id 'a' is already the id of " + f"{path}:1"),
        (9, "unknown field 'anwser' (did you mean 'answer'?)"),
        (10, "missing field 'answer'"),
        (11, "field 'answer' must be a non-empty string"),
    ]
    assert len(lines) == 1 + len(expected)
    for line, (number, text) in zip(lines[1:], expected, strict=True):
        assert line.startswith(f"  {path}:{number}: ") and text in line, line


def test_skipping_keeps_the_good_rows_warns_and_counts_the_bad(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "t.jsonl", good("Q1?"), "[1]", good("Q3?"), '{"question": "Q4?"}')
    monkeypatch.setenv(SKIP_BAD_ROWS_ENV, "1")
    with pytest.warns(
        UserWarning, match=re.escape(f"{path}: skipped 2 bad rows (the first: {path}:2")
    ):
        tasks = read(path)
    assert [t.prompt for t in tasks] == ["Q1?", "Q3?"]
    assert skipped_rows(path) == 2 and skipped_rows(str(path)) == 2


def test_a_file_whose_rows_are_all_skipped_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "t.jsonl", "[1]", "2")
    monkeypatch.setenv(SKIP_BAD_ROWS_ENV, "1")
    with (
        pytest.warns(UserWarning),
        pytest.raises(UserInputError, match=r"all 2 rows were bad and skipped"),
    ):
        read(path)


@pytest.mark.parametrize("skip", [False, True])
def test_a_repeated_question_is_refused_naming_both_rows_even_when_skipping(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, skip: bool
) -> None:
    if skip:
        monkeypatch.setenv(SKIP_BAD_ROWS_ENV, "1")
    path = write(tmp_path / "t.jsonl", good("Q1?"), good("Q2?"), good("  Q1?  ", id="again"))
    with pytest.raises(UserInputError) as err:
        read(path)
    assert str(err.value) == (
        f"{path}:3: the same question as {path}:1: 'Q1?'; the two would be one task asked twice: "
        "keep one row"
    )


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda d: write(d / "e.jsonl"),
            r"e\.jsonl: no tasks \(the file is empty\); write one JSON object per line, like \{",
        ),
        (lambda d: write(d / "b.jsonl", "", "  "), r"b\.jsonl: no tasks \(the file is empty\)"),
        (lambda d: d, r"^tasks .+: is a directory; give one JSONL file"),
        (lambda d: d / "missing.jsonl", r"^tasks .+missing\.jsonl: no such file or directory$"),
        (lambda d: "", r"^tasks='' names no file"),
        (lambda d: str(d / "a\0b"), r"names no file"),
        (
            lambda d: (d / "bin.jsonl").write_bytes(b"{}\0") and d / "bin.jsonl",
            r"bin\.jsonl: a binary file",
        ),
    ],
    ids=["empty", "blank lines", "directory", "missing", "empty path", "NUL in path", "binary"],
)
def test_a_source_that_is_no_task_file_is_refused_naming_it(
    tmp_path: Path, make, message: str
) -> None:
    with pytest.raises(UserInputError, match=message):
        read(make(tmp_path))


def test_a_file_past_the_row_bound_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(task_files, "MAX_TASK_ROWS", 2)
    path = write(tmp_path / "t.jsonl", good("Q1?"), good("Q2?"), good("Q3?"))
    with pytest.raises(UserInputError, match=r"t\.jsonl: more than 2 tasks; split the task set"):
        read(path)
    with pytest.raises(UserInputError, match=r"^tasks: more than 2 tasks"):
        read([{"question": f"Q{i}?", "answer": "A"} for i in range(3)])


def test_a_question_with_a_lone_surrogate_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", '{"question": "Q\\ud800?", "answer": "A"}')
    with pytest.raises(
        UserInputError, match=r"t\.jsonl:1: the question holds a lone UTF-16 surrogate"
    ):
        read(path)


def test_a_list_of_dicts_is_read_as_a_file_is() -> None:
    tasks = read(
        [{"question": "Q1?", "answer": "A", "id": "x"}, {"question": "Q2?", "answer": "B"}]
    )
    assert [(t.prompt, t.gold, t.row_id) for t in tasks] == [("Q1?", "A", "x"), ("Q2?", "B", "")]
    assert read(({"question": "Q1?", "answer": "A"},))[0].prompt == "Q1?"  # any sequence
    with pytest.raises(UserInputError) as err:
        read(
            [
                {"question": "Q1?", "answer": "A"},
                ["no"],
                {"question": "Q3?", "answer": "A", "id": ""},
            ]
        )
    assert str(err.value).splitlines()[1:] == [
        f"  tasks[1]: expected a JSON object like {EXAMPLE}, got list",
        "  tasks[2]: field 'id' must be a string of 1 to 128 printable characters without spaces "
        'at either end, e.g. "id": "case-17"; got str \'\'',
    ]
    with pytest.raises(UserInputError, match=r"^tasks: no tasks \(the list is empty\)"):
        read([])


@pytest.mark.parametrize("source", [{"question": "Q?", "answer": "A"}, 7, b"t.jsonl", None])
def test_a_source_of_another_type_is_refused(source: Any) -> None:
    with pytest.raises(
        UserInputError, match=r"^tasks must be a path to a JSONL file or a list of row dicts"
    ):
        read(source)


def test_a_misspelt_field_gets_a_suggestion_and_id_is_always_allowed() -> None:
    check_row_fields({"question": "Q", "id": "x"}, "w", required=("question",), example=EXAMPLE)
    with pytest.raises(
        UserInputError,
        match=r"^w: unknown field 'qestion' \(did you mean 'question'\?\); allowed fields are 'question' and 'id'$",
    ):
        check_row_fields({"qestion": "Q"}, "w", required=("question",), example=EXAMPLE)


JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
KEYS = st.sampled_from(["question", "answer", "anwser", "id", "kind", "aliases"]) | st.text(
    max_size=6
)
ROWS = st.dictionaries(KEYS, JSON_VALUES | st.sampled_from(["Q?", "A", "row-1"]), max_size=5)
NEAR_GOOD = st.fixed_dictionaries(  # often a good row, so the property sees tasks returned too
    {
        "question": st.sampled_from(["Q1?", "Q2?", " "]) | st.text(max_size=6),
        "answer": st.just("A") | JSON_SCALARS,
    },
    optional={"id": st.sampled_from(["r1", "r2"]) | JSON_SCALARS, "kind": JSON_VALUES},
)
ANY_ROW = NEAR_GOOD | ROWS | JSON_VALUES


def gives_tasks_or_a_user_error(source: Any, skip: bool) -> None:
    """``read(source)`` returns tasks or raises :class:`UserInputError`, never anything else."""
    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():
        mp.setenv(SKIP_BAD_ROWS_ENV, "1" if skip else "0")
        warnings.simplefilter("ignore")  # skipping warns: the property is about what is raised
        try:
            tasks = read(source)
        except UserInputError:
            return
    assert tasks and all(isinstance(t, Task) for t in tasks)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(ANY_ROW, max_size=5), skip=st.booleans())
def test_any_list_of_rows_gives_tasks_or_a_user_error(rows: list[Any], skip: bool) -> None:
    gives_tasks_or_a_user_error(rows, skip)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    lines=st.lists(
        ANY_ROW.map(lambda v: json.dumps(v, ensure_ascii=False)) | st.text(max_size=12), max_size=5
    ),
    skip=st.booleans(),
)
def test_any_file_of_lines_gives_tasks_or_a_user_error(
    tmp_path: Path, lines: list[str], skip: bool
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))
    gives_tasks_or_a_user_error(path, skip)
