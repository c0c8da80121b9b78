"""Read a family's own task rows (``tasks=`` from Python, ``agentenv eval --tasks FILE``) with the library's rules.

Why: ``agentenv eval --tasks FILE`` hands the env the file's path, and the README promises, for every
family, that the file is bounded, that every bad row is named (``path:line`` and the field), that
``--skip-bad-rows`` keeps the good rows, and that a question asked twice is refused naming both rows.
The shipped families each wrote that loop; a new family calls :func:`read_task_rows` with a function
that turns one row into one of its tasks, and gets all of it.

``source`` is a path (the command always gives one) or a list of row dicts (from Python). A file
holds one JSON object per line; blank lines are skipped. The reader:

* refuses an empty path, a folder and a missing, special, binary or oversized file
  (:func:`~agentenv.engine.task_files.check_task_source`), then reads the file bounded as it goes
  (:class:`~agentenv.engine.task_files.TaskSourceReads`; a leading BOM is dropped);
* refuses a line that is not one JSON object (invalid JSON, a list, a number, nesting too deep, a
  key written twice), naming ``path:line``;
* checks a row's optional ``id`` (:func:`~agentenv.engine.task_files.check_row_id`, unique in the
  source) and hands the row to ``row_to_task(row, where)``, which raises
  :class:`~agentenv.errors.UserInputError` naming ``where`` and the field;
* names every bad row in one error, or with ``agentenv eval --skip-bad-rows``
  (``$AGENTENV_SKIP_BAD_ROWS=1``) keeps the good rows and warns
  (:class:`~agentenv.engine.task_files.BadRows`);
* refuses a source with no good row, or more than
  :data:`~agentenv.engine.task_files.MAX_TASK_ROWS` rows, and then a task whose prompt repeats an
  earlier row's, naming both rows (even when skipping: which of the two is meant is unknown).

``row_to_task`` sees only JSON objects and may keep the row's ``id`` as the task's ``row_id``;
:func:`check_row_fields` refuses a missing or unknown field for it, with a "did you mean".

Example:
    >>> from agentenv.engine.task import Task
    >>> EXAMPLE = '{"question": "What is the capital of Peru?", "answer": "Lima"}'
    >>> def row_to_task(row, where):
    ...     check_row_fields(row, where, required=("question", "answer"), example=EXAMPLE)
    ...     return Task(prompt=row["question"], gold=row["answer"], row_id=row.get("id", ""))
    >>> rows = [{"question": "Capital of Peru?", "answer": "Lima", "id": "q1"}]
    >>> [(t.prompt, t.row_id) for t in read_task_rows(rows, row_to_task, example=EXAMPLE)]
    [('Capital of Peru?', 'q1')]
    >>> read_task_rows([{"question": "Q?", "anwser": "A"}], row_to_task, example=EXAMPLE)
    Traceback (most recent call last):
    ...
    agentenv.errors.UserInputError: tasks[0]: unknown field 'anwser' (did you mean 'answer'?); allowed fields are 'question', 'answer' and 'id'
    >>> read_task_rows([{"question": "Q?", "answer": "A"}] * 2, row_to_task, example=EXAMPLE)
    Traceback (most recent call last):
    ...
    agentenv.errors.UserInputError: tasks[1]: the same question as tasks[0]: 'Q?'; the two would be one task asked twice: keep one row
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from agentenv.engine.parsing import surrogate_at
from agentenv.engine.strict_json import RepeatedKey, loads_unique
from agentenv.engine.task_files import (
    BadRows,
    RowIds,
    TaskSourceReads,
    check_row_count,
    check_row_id,
    check_task_source,
)
from agentenv.errors import UserInputError

__all__ = ["check_row_fields", "read_task_rows"]

T = TypeVar("T")


def _prompt(task: Any) -> str:
    return task.prompt


def read_task_rows(
    source: str | os.PathLike[str] | Sequence[Mapping[str, Any]],
    row_to_task: Callable[[Mapping[str, Any], str], T],
    *,
    example: str,
    prompt_of: Callable[[T], str] = _prompt,
) -> list[T]:
    """The tasks of a JSONL file or a list of row dicts, each row made by ``row_to_task(row, where)``.

    ``where`` is ``path:line`` for a file and ``tasks[i]`` for a list. ``example`` is one good row,
    quoted in the refusals; ``prompt_of`` gives a task's question (``task.prompt`` by default), which
    no two rows may share.

    Raises:
        UserInputError: a bad source, or bad rows (every one named, unless skipping; see the module
            docstring), or a repeated question.
    """
    if isinstance(source, (str, os.PathLike)):
        rows = _file_rows(source, row_to_task, example, prompt_of)
    elif isinstance(source, Sequence) and not isinstance(source, (bytes, bytearray)):
        rows = _list_rows(source, row_to_task, example, prompt_of)
    else:
        raise UserInputError(
            f"tasks must be a path to a JSONL file or a list of row dicts like {example}; "
            f"got {type(source).__name__}"
        )
    _check_distinct(rows, prompt_of)
    return [task for _, task in rows]


def _file_rows(
    source: str | os.PathLike[str],
    row_to_task: Callable[[Mapping[str, Any], str], T],
    example: str,
    prompt_of: Callable[[T], str],
) -> list[tuple[str, T]]:
    if not str(source).strip() or "\0" in str(source):
        raise UserInputError(
            f"tasks={str(source)!r} names no file; give a JSONL file of rows like {example}"
        )
    path = Path(source)
    if path.is_dir():
        raise UserInputError(
            f"tasks {path}: is a directory; give one JSONL file, one JSON object per line, like {example}"
        )
    check_task_source(path)  # a missing, special, binary or oversized file: one line naming it
    rows: list[tuple[str, T]] = []
    ids, bad, count = RowIds(), BadRows(str(path)), 0
    with TaskSourceReads(path).open(path) as fh:  # bounded as read, not only as checked
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            count += 1
            check_row_count(count, str(path))
            where = f"{path}:{lineno}"
            with bad.row():
                row = _json_object(line, where, example)
                rows.append((where, _task(row, where, row_to_task, ids, example, prompt_of)))
    skipped = bad.finish()
    if not rows:
        why = f"all {skipped} rows were bad and skipped" if skipped else "the file is empty"
        raise UserInputError(
            f"{path}: no tasks ({why}); write one JSON object per line, like {example}"
        )
    return rows


def _list_rows(
    source: Sequence[Any],
    row_to_task: Callable[[Mapping[str, Any], str], T],
    example: str,
    prompt_of: Callable[[T], str],
) -> list[tuple[str, T]]:
    check_row_count(len(source), "tasks")
    rows: list[tuple[str, T]] = []
    ids, bad = RowIds(), BadRows("tasks")
    for i, row in enumerate(source):
        with bad.row():
            where = f"tasks[{i}]"
            rows.append((where, _task(row, where, row_to_task, ids, example, prompt_of)))
    skipped = bad.finish()
    if not rows:
        why = f"all {skipped} rows were bad and skipped" if skipped else "the list is empty"
        raise UserInputError(f"tasks: no tasks ({why}); give row dicts like {example}")
    return rows


def _json_object(line: str, where: str, example: str) -> Any:
    """One line's JSON value; every reason it cannot be read is a :class:`UserInputError` at ``where``."""
    try:
        return loads_unique(line.rstrip("\r\n"))
    except RepeatedKey as err:
        raise UserInputError(f"{where}: {err}") from None
    except json.JSONDecodeError as err:
        raise UserInputError(
            f"{where}: invalid JSON ({err.msg} at column {err.colno}); each line must be one JSON "
            f"object like {example}"
        ) from None
    except RecursionError:
        raise UserInputError(
            f"{where}: JSON nested too deeply; each line must be one JSON object like {example}"
        ) from None


def _task(
    row: Any,
    where: str,
    row_to_task: Callable[[Mapping[str, Any], str], T],
    ids: RowIds,
    example: str,
    prompt_of: Callable[[T], str],
) -> T:
    """One row as a task: a JSON object, its ``id`` well formed and (once the row is good) not another's."""
    if not isinstance(row, Mapping):
        raise UserInputError(
            f"{where}: expected a JSON object like {example}, got {type(row).__name__}"
        )
    row_id = check_row_id(row["id"], where) if "id" in row else None
    task = row_to_task(row, where)
    if surrogate_at(prompt_of(task)) >= 0:  # a \ud800 escape is no text: UTF-8 cannot write it
        raise UserInputError(
            f"{where}: the question holds a lone UTF-16 surrogate (a \\ud800-\\udfff escape "
            "without its pair); fix the escape or remove it"
        )
    if row_id is not None:
        ids.add(row_id, where)
    return task


def _check_distinct(rows: list[tuple[str, T]], prompt_of: Callable[[T], str]) -> None:
    """Refuse a task whose question repeats an earlier row's, naming both rows."""
    first: dict[str, str] = {}
    for where, task in rows:
        prompt = prompt_of(task)
        seen = first.setdefault(prompt, where)
        if seen != where:
            shown = repr(prompt) if len(prompt) <= 80 else repr(prompt[:77] + "...")
            raise UserInputError(
                f"{where}: the same question as {seen}: {shown}; the two would be one task asked "
                "twice: keep one row"
            )


def check_row_fields(
    row: Mapping[str, Any],
    where: str,
    *,
    required: Sequence[str],
    optional: Sequence[str] = (),
    example: str,
) -> None:
    """Refuse a row with an unknown field (with a "did you mean") or a missing one; ``id`` is always allowed.

    Why: a typo such as ``"anwser"`` would otherwise drop a field silently, and the benchmark
    would measure the typo.

    Raises:
        UserInputError: naming ``where``, the field and the fix.
    """
    allowed = (*required, *optional, "id")
    for name in row:
        if name not in allowed:
            close = difflib.get_close_matches(str(name), allowed, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            names = ", ".join(repr(a) for a in allowed[:-1]) + f" and {allowed[-1]!r}"
            shown = repr(name) if len(repr(name)) <= 60 else repr(name)[:57] + "..."
            raise UserInputError(
                f"{where}: unknown field {shown}{hint}; allowed fields are {names}"
            )
    for name in required:
        if name not in row:
            raise UserInputError(f"{where}: missing field {name!r}; e.g. {example}")
