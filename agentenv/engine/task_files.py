"""Bounds and row rules shared by every reader of a user's task file, from the CLI or from Python.

Why one module: ``agentenv eval --tasks /dev/zero`` grew to 5.5 GB in 15 s
before the command checked its input, and ``gym.make(id, tasks="/dev/zero")``
from Python still did, since the check lived in the command. The families'
readers (:mod:`agentenv.envs.media_search.tasks.user_tasks`,
:mod:`agentenv.envs.rare_disease.tasks.user_patients`) now call
:func:`check_task_source` on any path they are given, and :func:`check_row_count`
on the rows of a file or of a list, so both ways in are bounded alike.

A task source is a regular file, or a folder of regular files (searched
recursively), readable, at most :data:`MAX_TASK_FILE_BYTES` in all, UTF-8
text without NUL bytes, with no line over :data:`MAX_TASK_LINE_BYTES` and at
most :data:`MAX_TASK_ROWS` tasks. It is checked in one streaming pass in
1 MiB blocks, so ``/dev/zero`` or a 10 GB file costs a ``stat``, not memory.

The bounds hold while the file is read, not only as ``stat`` saw it: a file that grows after the
check (or whose ``st_size`` says 0, as ``/proc`` files do) is refused, with the same message,
once its bytes pass a bound. The readers open a task file through :class:`TaskSourceReads`, which
counts every byte it hands on and never reads more than :data:`MAX_TASK_FILE_BYTES` ``+ 1``.

A row's optional ``id`` follows one grammar in every family (:func:`check_row_id`),
and is unique within its file or list (:class:`RowIds`).

A reader checks every row before it refuses the file (:class:`BadRows`), so a file
with several bad rows names each of them (the first :data:`MAX_REPORTED_BAD_ROWS`,
then how many more) in one error; with ``$AGENTENV_SKIP_BAD_ROWS=1`` (``agentenv eval
--skip-bad-rows``) it keeps the good rows instead, warns, and counts the skipped ones
(:func:`skipped_rows`).

Example:
    >>> check_row_id("case-17", "cases.jsonl:3")
    'case-17'
    >>> check_row_id(17, "cases.jsonl:3")
    Traceback (most recent call last):
    ...
    agentenv.errors.UserInputError: cases.jsonl:3: field 'id' must be a string of 1 to 128 printable characters without spaces at either end, e.g. "id": "case-17"; got int 17
    >>> ids = RowIds()
    >>> ids.add("a", "t.jsonl:1"); ids.add("a", "t.jsonl:4")
    Traceback (most recent call last):
    ...
    agentenv.errors.UserInputError: t.jsonl:4: id 'a' is already the id of t.jsonl:1; give each row its own id
"""

from __future__ import annotations

import codecs
import io
import os
import stat
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentenv.errors import UserInputError

__all__ = [
    "MAX_REPORTED_BAD_ROWS",
    "MAX_ROW_ID_CHARS",
    "MAX_TASK_FILE_BYTES",
    "MAX_TASK_LINE_BYTES",
    "MAX_TASK_ROWS",
    "SKIP_BAD_ROWS_ENV",
    "BadRows",
    "RowIds",
    "TaskSourceReads",
    "check_row_count",
    "check_row_id",
    "check_task_source",
    "skipped_rows",
    "task_source_files",
]

MAX_TASK_FILE_BYTES = 256 * 1024 * 1024
"""Largest task file (or folder of case files) a reader accepts: far above any real task set."""
MAX_TASK_LINE_BYTES = 1024 * 1024
"""Longest line of a JSONL task file: a task is a question or a patient, never a megabyte."""
MAX_TASK_ROWS = 1_000_000
"""Most tasks in one file, folder or list: a million is about 250x the largest published test split."""
MAX_ROW_ID_CHARS = 128
"""Longest row ``id``."""
MAX_REPORTED_BAD_ROWS = 20
"""Most bad rows one error names; the rest are counted (``... and 7 more bad rows``)."""
SKIP_BAD_ROWS_ENV = "AGENTENV_SKIP_BAD_ROWS"
"""Environment variable: ``1`` keeps a task file's good rows and skips its bad ones (``agentenv eval
--skip-bad-rows`` sets it, so worker processes read the file alike)."""

_SKIPPED: dict[str, int] = {}


def task_source_files(path: Path, where: str) -> list[Path]:
    """The regular files of a task source (itself, or those under a folder, sorted); one-line errors.

    Raises:
        UserInputError: a missing or unreadable path, a device, pipe or socket, or an empty folder.
    """
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise UserInputError(f"{where} {path}: no such file or directory") from None
    except OSError as err:
        raise UserInputError(f"{where} {path}: cannot read it ({err.strerror})") from None
    if stat.S_ISDIR(mode):
        entries = sorted(f for f in path.rglob("*") if not f.is_dir())
        odd = [f for f in entries if not f.is_file()]  # a dangling link, a pipe, a device
        if odd:
            raise UserInputError(
                f"{where} {path}: {odd[0]} is not a regular file (a dangling link, a pipe or a "
                f"device){f'; {len(odd) - 1} more such entries' if len(odd) > 1 else ''}; move it "
                "out of the folder"
            )
        files = entries
        if not files:
            raise UserInputError(
                f"{where} {path}: the folder holds no files; give a task file or a folder of them"
            )
        return files
    if stat.S_ISREG(mode):
        return [path]
    raise UserInputError(f"{where} {path}: not a regular file or folder (a device, pipe or socket)")


def check_task_source(
    path: str | os.PathLike[str], where: str = "tasks", *, contents: bool = True
) -> None:
    """Refuse a task source that cannot be a task file before anything reads it, in one line.

    ``where`` names the input in the message (``--tasks`` for the command, ``tasks`` for Python).
    ``contents=False`` checks what the files are (regular, how many, their size) but not their
    text: the command's early check of a folder, whose reader says first which files a folder
    of its tasks may hold (a stray image is named as such, not as a binary task file).

    Raises:
        UserInputError: the file or folder breaks a bound of the module docstring.
    """
    path = Path(path)
    files = task_source_files(path, where)
    total = 0
    for file in files:
        total += file.stat().st_size
        if total > MAX_TASK_FILE_BYTES:
            raise _too_large(where, path)
    if len(files) > MAX_TASK_ROWS:
        raise UserInputError(
            f"{where} {path}: more than {MAX_TASK_ROWS:,} files; split the task set"
        )
    if not contents:
        return
    reads = TaskSourceReads(path, where)  # the sizes stat gave are counted again as read
    for file in files:
        _check_task_text(file, reads)


def _too_large(where: str, path: Path) -> UserInputError:
    return UserInputError(
        f"{where} {path}: larger than {MAX_TASK_FILE_BYTES >> 20} MiB; split the task set"
    )


class TaskSourceReads:
    """The bytes read so far from one task source (a file, or every file of a folder), held to its bounds.

    Why: :func:`check_task_source` sees a file's size through ``stat``, and the reader opens the
    file afterwards; a file that grew in between (or whose ``st_size`` is 0, as in ``/proc``) was
    read whole. Each block read through :meth:`open` is counted as it arrives: past
    :data:`MAX_TASK_FILE_BYTES` in all, a line past :data:`MAX_TASK_LINE_BYTES`, or a NUL byte is
    refused with :func:`check_task_source`'s message, and no read asks for more than the bound + 1.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "t.jsonl"
        >>> _ = path.write_text('{"id": "a"}\\n')
        >>> reads = TaskSourceReads(path)
        >>> with reads.open(path) as fh:
        ...     fh.read(), reads.total
        ('{"id": "a"}\\n', 12)
    """

    def __init__(self, path: str | os.PathLike[str], where: str = "tasks") -> None:
        self.path, self.where, self.total = Path(path), where, 0

    def open(self, file: Path, encoding: str = "utf-8-sig") -> io.TextIOWrapper:
        """``file`` (the source, or one file of its folder) as text, as ``open(file, encoding=...)``
        reads it (universal newlines, strict decoding), its bytes counted against the bounds."""
        raw = _CountedFile(file, self)
        return io.TextIOWrapper(io.BufferedReader(raw, 1 << 20), encoding=encoding)

    def room(self, size: int) -> int:
        """How many of ``size`` bytes the next read may ask for: never past the bound + 1."""
        return max(0, min(size, MAX_TASK_FILE_BYTES + 1 - self.total))

    def take(self, block: bytes, file: Path, line: int) -> int:
        """Count ``block`` of ``file`` (whose current line has ``line`` bytes so far); the line's
        length after it.

        Raises:
            UserInputError: the source passed its size bound, or ``block`` has a NUL byte or ends
                a line (or makes one) longer than the line bound.
        """
        self.total += len(block)
        if self.total > MAX_TASK_FILE_BYTES:
            raise _too_large(self.where, self.path)
        if b"\0" in block:
            raise UserInputError(
                f"{self.where} {file}: a binary file (NUL bytes); a task file is UTF-8 text"
            )
        parts = block.split(b"\n")
        lengths = [line + len(parts[0]), *(len(part) for part in parts[1:])]
        if max(lengths) > MAX_TASK_LINE_BYTES:
            raise UserInputError(
                f"{self.where} {file}: a line longer than {MAX_TASK_LINE_BYTES >> 20} MiB; "
                "one task per line"
            )
        return lengths[-1]


class _CountedFile(io.RawIOBase):
    """A file's bytes, each read counted by a :class:`TaskSourceReads` and asked no further than its room."""

    def __init__(self, file: Path, reads: TaskSourceReads) -> None:
        super().__init__()
        self._file, self._reads, self._line = file, reads, 0
        self._raw = io.FileIO(file, "r")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        n = self._raw.readinto(view[: self._reads.room(len(view))])
        if n:
            self._line = self._reads.take(bytes(view[:n]), self._file, self._line)
        return n or 0

    def fileno(self) -> int:
        return self._raw.fileno()

    def close(self) -> None:
        try:
            self._raw.close()
        finally:
            super().close()


def _check_task_text(file: Path, reads: TaskSourceReads) -> None:
    where = reads.where
    if not os.access(file, os.R_OK):
        raise UserInputError(f"{where} {file}: not readable (permission denied)")
    try:
        handle = file.open("rb")
    except OSError as err:
        raise UserInputError(f"{where} {file}: cannot read it ({err.strerror})") from None
    with handle:
        line, offset = 0, 0  # line: bytes of the current line so far
        decoder = codecs.getincrementaldecoder("utf-8")()
        while block := handle.read(reads.room(1 << 20)):
            line = reads.take(block, file, line)
            try:
                decoder.decode(block)
            except UnicodeDecodeError as err:
                raise UserInputError(
                    f"{where} {file}: not UTF-8 text (byte {offset + err.start})"
                ) from None
            offset += len(block)
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise UserInputError(
                f"{where} {file}: not UTF-8 text (it ends inside a character)"
            ) from None


def check_row_count(count: int, where: str) -> None:
    """Refuse a task set of more than :data:`MAX_TASK_ROWS` rows (``count`` may be the first row past it).

    Raises:
        UserInputError: naming ``where`` and the bound.
    """
    if count > MAX_TASK_ROWS:
        raise UserInputError(f"{where}: more than {MAX_TASK_ROWS:,} tasks; split the task set")


def check_row_id(value: Any, where: str) -> str:
    """A row's ``id``: a string of 1 to :data:`MAX_ROW_ID_CHARS` printable characters, no space at either end.

    Why a grammar: an id is how a user finds a row again in results and messages, so a number, a
    blank, a line break or a kilobyte of text is a mistake to report, not a value to carry.

    Raises:
        UserInputError: naming ``where``, the field and an example.
    """
    if (
        isinstance(value, str)
        and 0 < len(value) <= MAX_ROW_ID_CHARS
        and value.isprintable()
        and value == value.strip()
    ):
        return value
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    raise UserInputError(
        f"{where}: field 'id' must be a string of 1 to {MAX_ROW_ID_CHARS} printable characters without spaces "
        f'at either end, e.g. "id": "case-17"; got {type(value).__name__} {shown}'
    )


class RowIds:
    """The ids seen so far in one file or list, to refuse a repeated one naming both rows."""

    def __init__(self) -> None:
        self._first: dict[str, str] = {}

    def add(self, row_id: str, where: str) -> None:
        """Record ``row_id`` of the row at ``where``.

        Raises:
            UserInputError: the id is already another row's.
        """
        first = self._first.setdefault(row_id, where)
        if first != where:
            raise UserInputError(
                f"{where}: id {row_id!r} is already the id of {first}; give each row its own id"
            )


def skipping_bad_rows() -> bool:
    """Whether readers skip bad rows (:data:`SKIP_BAD_ROWS_ENV` is ``1``) instead of refusing the file."""
    return os.environ.get(SKIP_BAD_ROWS_ENV, "") == "1"


def skipped_rows(source: str | os.PathLike[str] | None) -> int:
    """How many bad rows the last read of ``source`` (a file, or every file under a folder) skipped."""
    if source is None:
        return 0
    root = str(Path(source))
    return sum(n for src, n in _SKIPPED.items() if src == root or src.startswith(root + os.sep))


class BadRows:
    """The bad rows of one task file or list: collected while every row is read, then reported together.

    Why: a file with five bad rows used to name the first only, so fixing it took five runs.

    Example:
        >>> bad = BadRows("t.jsonl", skip=False)
        >>> for n in (1, 2, 3):
        ...     with bad.row():
        ...         if n != 2:
        ...             raise UserInputError(f"t.jsonl:{n}: field 'answer' is missing")
        >>> bad.finish()
        Traceback (most recent call last):
        ...
        agentenv.errors.UserInputError: t.jsonl: 2 bad rows (fix them, or agentenv eval --skip-bad-rows keeps the rest):
          t.jsonl:1: field 'answer' is missing
          t.jsonl:3: field 'answer' is missing
    """

    def __init__(self, source: str, *, skip: bool | None = None) -> None:
        self.source = source
        self.skip = skipping_bad_rows() if skip is None else skip
        self.errors: list[str] = []

    @contextmanager
    def row(self) -> Iterator[None]:
        """Read one row inside this block: a :class:`UserInputError` it raises is recorded, not raised."""
        try:
            yield
        except UserInputError as err:
            self.errors.append(str(err))

    def finish(self) -> int:
        """Raise one error naming the bad rows, or (skipping) warn and return how many were skipped."""
        _SKIPPED[self.source] = 0
        if not self.errors:
            return 0
        if not self.skip:
            shown = self.errors[:MAX_REPORTED_BAD_ROWS]
            more = len(self.errors) - len(shown)
            if len(self.errors) == 1:
                raise UserInputError(self.errors[0])
            lines = [
                f"{self.source}: {len(self.errors)} bad rows (fix them, or agentenv eval "
                "--skip-bad-rows keeps the rest):",
                *(f"  {e}" for e in shown),
            ]
            if more:
                lines.append(f"  ... and {more} more bad rows")
            raise UserInputError("\n".join(lines))
        _SKIPPED[self.source] = len(self.errors)
        warnings.warn(
            f"{self.source}: skipped {len(self.errors)} bad row{'s' if len(self.errors) > 1 else ''} "
            f"(the first: {self.errors[0]})",
            stacklevel=3,
        )
        return len(self.errors)
