"""Read the ``tasks=`` argument of the rare-disease env: your own patients instead of a split.

Accepted, so that ``agentenv eval --tasks PATH`` and ``gym.make(..., tasks=...)``
take what researchers have at hand:

* a ``.jsonl`` file of task dicts ``{"phenotypes": [...], "excluded"?: [...],
  "diagnosis": [...], "id"?: str}``, one per line (blank lines allowed);
* a GA4GH Phenopacket v2 ``.json`` file;
* a folder of cases (searched recursively, in name order) holding only
  ``.json`` phenopacket files and ``.jsonl`` files of task dicts (an allow-list:
  any other file is refused, naming it, rather than skipped in silence);
* a list whose items are task dicts or phenopacket dicts (a dict with
  ``phenotypicFeatures``), or :class:`~agentenv.envs.rare_disease.patients.simulated.Patient` objects.

A path is bounded as every task source is (:func:`agentenv.engine.task_files.check_task_source`:
size, line length, text, at most :data:`~agentenv.engine.task_files.MAX_TASK_ROWS` tasks), whether
it comes from ``agentenv eval --tasks`` or from ``gym.make``; so is a list's length. A task
dict's optional ``id`` follows :func:`agentenv.engine.task_files.check_row_id` and is unique within
its file or list.

The reading itself is :mod:`agentenv.envs.rare_disease.tasks.phenopackets`: ids are
mapped and unknown ones reported; cases outside the universe are skipped and
counted. Each warning starts with the user's ``file:line`` and
:func:`warn_import` issues it as a Python warning attributed to that file and
line (not to a line of Gymnasium's). Malformed input raises
:class:`~agentenv.errors.UserInputError` (a ``ValueError``; the ``agentenv``
command prints it as one line) naming the file, line or item, the field and
the fix.

Example:
    >>> is_phenopacket({"phenotypicFeatures": []}), is_phenopacket({"phenotypes": []})
    (True, False)
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.engine.strict_json import RepeatedKey, loads_unique
from agentenv.engine.task_files import (
    BadRows,
    RowIds,
    TaskSourceReads,
    check_row_count,
    check_row_id,
    check_task_source,
    task_source_files,
)
from agentenv.envs.rare_disease.patients.simulated import Patient
from agentenv.envs.rare_disease.tasks.phenopackets import (
    ImportNote,
    ImportResult,
    from_phenopacket,
    import_task,
    load_phenopackets,
)
from agentenv.errors import UserInputError

UserTasks = str | Path | Sequence[Mapping[str, Any] | Patient]
FORMATS = (
    "a .jsonl file of task dicts, a phenopacket .json file, a folder of .json and .jsonl case files, "
    "or a list of task dicts, phenopacket dicts or Patient objects"
)
CASE_SUFFIXES = (".json", ".jsonl")
"""The files a folder of cases may hold: phenopackets and JSONL task files."""


def is_phenopacket(obj: Mapping[str, Any]) -> bool:
    """A dict is read as a phenopacket when it has phenopacket fields and no task-dict fields."""
    return "phenotypes" not in obj and (
        "phenotypicFeatures" in obj or "interpretations" in obj or "diseases" in obj
    )


_EXAMPLE = '{"phenotypes": ["HP:0001166"], "diagnosis": ["OMIM:154700"]}'


def read_jsonl(path: Path) -> list[Any]:
    """The JSON values of a JSONL file; a bad line raises UserInputError naming file and line."""
    return [value for _, value in read_jsonl_lines(path)]


NOTES_SHOWN_PER_LINE = 5
"""Import notes written out for one line of a case file; the rest are counted."""


class BadJsonLine(str):
    """What a line that is not JSON reads as when the caller collects bad rows: the reason."""


def read_jsonl_lines(
    path: Path, *, keep_bad: bool = False, reads: TaskSourceReads | None = None
) -> list[tuple[int, Any]]:
    """``(line number, JSON value)`` for each non-blank line of a JSONL file.

    ``keep_bad``: a line that is not JSON is a :class:`BadJsonLine` (its reason) in the list, so
    that the caller names every bad row at once and ``--skip-bad-rows`` keeps the rest.
    ``reads``: the byte count of the task source ``path`` belongs to (a folder's), else its own.

    Raises:
        UserInputError: a line that is not JSON (unless ``keep_bad``), naming the file, line and
            column; the file passing a bound of :mod:`agentenv.engine.task_files` as it is read.
    """
    rows: list[tuple[int, Any]] = []
    # bounded as read, not only as checked: a file that grew since is refused, not read whole
    reads = reads or TaskSourceReads(path)
    with reads.open(path) as fh:  # utf-8-sig: a leading BOM (Windows editors) is no text
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            check_row_count(len(rows) + 1, str(path))
            try:
                rows.append((n, loads_unique(line)))
            except (json.JSONDecodeError, RecursionError, RepeatedKey) as err:
                what = (
                    f"{err.msg} at column {err.colno}"
                    if isinstance(err, json.JSONDecodeError)
                    else str(err)
                    if isinstance(err, RepeatedKey)
                    else "nested too deeply"
                )
                reason = (
                    f"{path}:{n}: not valid JSON ({what}); write one task object per line, "
                    f"like {_EXAMPLE}"
                )
                if not keep_bad:
                    raise UserInputError(reason) from None
                rows.append((n, BadJsonLine(reason)))
    return rows


def warn_import(notes: Iterable[str], *, stacklevel: int = 2) -> None:
    """Issue each import warning as a ``UserWarning`` attributed to the user's file and line.

    A note that knows its file and line (:class:`ImportNote`) is reported at
    that line of the user's file, so ``-W error`` and warning filters see it
    there and the message shows the offending line; any other note (an item
    of a list given in code) is attributed to the caller ``stacklevel`` frames up.
    """
    by_line: dict[tuple[str, int], list[str]] = {}
    for note in notes:
        if isinstance(note, ImportNote) and note.filename is not None and note.lineno is not None:
            by_line.setdefault((note.filename, note.lineno), []).append(str(note))
        else:
            warnings.warn(str(note), UserWarning, stacklevel=stacklevel + 1)
    # One warning per line of the file: Python's own formatter prints the line with each warning,
    # so 2,000 unknown ids on one 28 KB line wrote 56 MB to stderr.
    for (filename, lineno), texts in by_line.items():
        shown = texts[:NOTES_SHOWN_PER_LINE]
        more = len(texts) - len(shown)
        text = "; ".join(shown) + (f"; and {more} more such notes on this line" if more else "")
        warnings.warn_explicit(text, UserWarning, filename, lineno)


def load_user_patients(kb: HpoKnowledgeBase, tasks: UserTasks) -> ImportResult:
    """Import the patients of ``tasks`` (see the module docstring).

    Raises:
        UserInputError: unreadable or malformed input, or an unsupported type.
        FileNotFoundError: a path that does not exist.
    """
    if isinstance(tasks, str) and not tasks.strip():
        raise UserInputError(f"tasks={tasks!r} names no file; give {FORMATS}")
    if isinstance(tasks, (str, Path)):
        path = Path(tasks)
        if not path.exists():
            raise FileNotFoundError(
                f"tasks={str(tasks)!r}: no such file or directory; give {FORMATS}"
            )
        if path.is_dir():
            return _load_folder(kb, path)
        if path.suffix not in CASE_SUFFIXES:
            raise UserInputError(
                f"tasks={str(tasks)!r}: unknown file type {path.suffix!r}; give {FORMATS}"
            )
        check_task_source(path)
        return _load_file(kb, path)
    if isinstance(tasks, Mapping) or not isinstance(tasks, Sequence):
        raise UserInputError(f"tasks must be {FORMATS}; got {type(tasks).__name__}")
    check_row_count(len(tasks), "tasks")
    return _import_items(kb, list(enumerate(tasks)), None)


def _load_file(
    kb: HpoKnowledgeBase, path: Path, reads: TaskSourceReads | None = None
) -> ImportResult:
    """One case file: a JSONL file of task dicts, or a phenopacket ``.json`` file; ``reads`` counts
    the bytes of a folder's files together."""
    if path.suffix == ".jsonl":
        return _import_items(kb, read_jsonl_lines(path, keep_bad=True, reads=reads), str(path))
    return load_phenopackets(kb, path, reads=reads)


def _load_folder(kb: HpoKnowledgeBase, root: Path) -> ImportResult:
    """Every case file under ``root`` in name order; a file of another kind is refused, naming it."""
    files = task_source_files(root, "tasks")
    strays = [f for f in files if f.suffix not in CASE_SUFFIXES]
    if strays:
        raise UserInputError(
            f"tasks={str(root)!r}: {strays[0]} is not a case file (a folder of cases holds only .json "
            f"phenopackets and .jsonl task files{f'; {len(strays) - 1} more such files' if len(strays) > 1 else ''}); "
            "move it out of the folder"
        )
    check_task_source(root)
    reads = TaskSourceReads(root)  # the folder's size bound holds for its files together, as read
    result = ImportResult(())
    for file in files:
        result = result + _load_file(kb, file, reads)
    check_row_count(len(result.patients) + sum(result.skipped.values()), f"tasks={str(root)!r}")
    return result


def _import_items(
    kb: HpoKnowledgeBase, items: list[tuple[int, Any]], file: str | None
) -> ImportResult:
    """Items numbered by file line (``file`` given) or by list index (``file`` None)."""
    result = ImportResult(())
    ids = RowIds()
    bad = BadRows(
        file or "tasks"
    )  # every bad row named at once (or skipped, see agentenv.engine.task_files)
    for n, item in items:
        where, line = (f"{file}:{n}", n) if file is not None else (f"tasks[{n}]", None)
        with bad.row():
            if isinstance(item, BadJsonLine):
                raise UserInputError(str(item))
            result = result + _import_item(kb, item, ids, where, file, line)
    bad.finish()
    return result


def _import_item(
    kb: HpoKnowledgeBase, item: Any, ids: RowIds, where: str, file: str | None, line: int | None
) -> ImportResult:
    if isinstance(item, Mapping) and not is_phenopacket(item) and "id" in item:
        ids.add(check_row_id(item["id"], where), where)
    if isinstance(item, Patient):
        if not kb.in_universe(item.disease_id):
            raise UserInputError(
                f"{where}: diagnosis {item.disease_id!r} is not in the {kb.universe!r} universe"
            )
        return ImportResult((item,))
    if isinstance(item, Mapping) and is_phenopacket(item):
        return from_phenopacket(kb, dict(item), where, file=file, line=line)
    return import_task(
        kb, item if not isinstance(item, Mapping) else dict(item), where, file=file, line=line
    )
