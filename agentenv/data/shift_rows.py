"""Reading task rows for ``agentenv data shift-check``: task rows or SFT chat rows, detected row by row.

Why a module of its own: the statistical tests never look at JSON; this is the
one place that turns a JSONL file into :class:`TaskRow` objects and explains,
in one line, what a bad row should have looked like.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentenv.engine.parsing import surrogate_at
from agentenv.engine.task_files import TaskSourceReads, check_task_source
from agentenv.errors import UserInputError

TEXT_KEYS = ("prompt", "question", "query", "instruction", "text", "input")
"""Keys whose string value is a task row's text, tried in this order."""

NESTED_KEYS = ("task", "metadata", "public")
"""Dicts inside a row searched (after the row itself) for the text, ``kind``, ``difficulty`` and ``group``."""

MAX_ROW_DEPTH = 64
"""The deepest nesting of objects and lists in a row read: a task row is two levels deep, an SFT
chat row with its tools' JSON schemas about ten; 100,000 ``[`` raised ``RecursionError``."""

_EXPECTED = (
    "one JSON object per line: a task row with a text field ("
    + ", ".join(repr(k) for k in TEXT_KEYS)
    + "; optionally 'kind', 'difficulty' and 'group'), or an SFT chat row {\"messages\": [...]} "
    "with a user message"
)


@dataclass(frozen=True)
class TaskRow:
    """One row's text and, when the row has them, its kind, difficulty and group."""

    text: str
    kind: str | None = None
    difficulty: str | None = None
    group: str | None = None
    """What the row is about, as its task set was split by (a film, a disease): rows of one group
    stay in one half of the no-shift baseline (:mod:`agentenv.data.shift_baseline`)."""


# --------------------------------------------------------------------------- reading


def _scopes(row: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [row, *(row[k] for k in NESTED_KEYS if isinstance(row.get(k), Mapping))]


def _label(scopes: Sequence[Mapping[str, Any]], key: str) -> str | None:
    for scope in scopes:
        value = scope.get(key)
        if (
            isinstance(value, (str, int, float))
            and not isinstance(value, bool)
            and str(value).strip()
        ):
            return str(value)
    return None


def _message_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        parts = [
            p.get("text")
            for p in content
            if isinstance(p, Mapping) and isinstance(p.get("text"), str)
        ]
        return "\n".join(parts) if parts else None
    return None


def row_from_dict(row: Any, where: str) -> TaskRow:
    """The :class:`TaskRow` of one decoded JSONL row; ``where`` (``path:line``) names it in errors."""
    if not isinstance(row, Mapping):
        raise UserInputError(
            f"{where}: a JSON {type(row).__name__}, not an object; expected {_EXPECTED}"
        )
    scopes = _scopes(row)
    text: str | None = None
    if "messages" in row:
        messages = row["messages"]
        if not isinstance(messages, list):
            raise UserInputError(
                f"{where}: 'messages' is not a list; expected an SFT chat row "
                '{"messages": [{"role": "user", "content": ...}, ...]}'
            )
        for message in messages:
            if isinstance(message, Mapping) and message.get("role") == "user":
                text = _message_text(message.get("content"))
                break
        if text is None or not text.strip():
            raise UserInputError(
                f"{where}: chat row without a user message with text content; "
                "the text of a chat row is its first user message"
            )
    else:
        for scope in scopes:
            for key in TEXT_KEYS:
                value = scope.get(key)
                if isinstance(value, str) and value.strip():
                    text = value
                    break
            if text is not None:
                break
        if text is None:
            keys = ", ".join(repr(k) for k in list(row)[:8]) or "none"
            raise UserInputError(
                f"{where}: no text in the row (its keys: {keys}); expected {_EXPECTED}"
            )
    fields = {
        "text": text,
        "kind": _label(scopes, "kind"),
        "difficulty": _label(scopes, "difficulty"),
        "group": _label(scopes, "group"),
    }
    for name, value in fields.items():
        _check_utf8(value, name, where)
    return TaskRow(**fields)


def _check_utf8(value: str | None, field: str, where: str) -> None:
    """Refuse a lone UTF-16 surrogate (``"\\ud800"`` in JSON decodes to one): it cannot be encoded
    as UTF-8, so the embedding, the report or its JSON would fail later with a traceback naming
    no row. A task file refuses it the same way."""
    if value is not None and surrogate_at(value) >= 0:
        raise UserInputError(
            f"{where}: the row's {field} holds a lone UTF-16 surrogate (a \\ud800-\\udfff escape "
            "without its pair), which is not text; write the character itself or remove it"
        )


class _LongNumber(ValueError):
    """A JSON integer with more digits than Python turns into an ``int``."""


def _bounded_int(digits: str) -> int:
    """``int`` for JSON integers, refusing one past Python's digit limit by name (its own
    ``ValueError`` names no row)."""
    limit = sys.get_int_max_str_digits()
    if limit and len(digits.lstrip("-")) > limit:
        raise _LongNumber(
            f"a number of {len(digits.lstrip('-')):,} digits (at most {limit:,} are read)"
        )
    return int(digits)


def _nested_deeper(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists and dicts deeper than ``limit`` (a walk without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            stack.extend(
                (child, depth + 1) for child in (item.values() if isinstance(item, dict) else item)
            )
    return False


def decode_row(line: str, where: str) -> Any:
    """One JSONL line decoded, every failure a one-line :class:`UserInputError` naming ``where``.

    Accepted: JSON nested at most :data:`MAX_ROW_DEPTH` levels, with integers Python can read.

    Example:
        >>> decode_row('{"question": "q", "group": 3}', "a.jsonl:1")
        {'question': 'q', 'group': 3}
        >>> decode_row("[" * 100_000, "a.jsonl:2")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        agentenv.errors.UserInputError: a.jsonl:2: JSON nested more than 64 levels deep; expected one JSON object per line: ...
    """
    try:
        value = json.loads(line, parse_int=_bounded_int)
    except json.JSONDecodeError as exc:
        raise UserInputError(
            f"{where}: not valid JSON ({exc.msg} at column {exc.colno}); expected {_EXPECTED}"
        ) from None
    except _LongNumber as exc:
        raise UserInputError(f"{where}: {exc}; write such a label as a string") from None
    except RecursionError:
        raise _too_deep(where) from None
    if line.count("[") + line.count("{") > MAX_ROW_DEPTH and _nested_deeper(value, MAX_ROW_DEPTH):
        raise _too_deep(where)
    return value


def _too_deep(where: str) -> UserInputError:
    return UserInputError(
        f"{where}: JSON nested more than {MAX_ROW_DEPTH} levels deep; expected {_EXPECTED}"
    )


def read_rows(path: str | Path) -> list[TaskRow]:
    """The rows of a JSONL file (blank lines skipped).

    Raises:
        UserInputError: a missing file, a directory, an empty file, a line that is
            not JSON or a row with no text, naming ``path:line`` and what was expected.
    """
    path = Path(path)
    if not path.exists():
        raise UserInputError(f"{path}: no such file; expected a JSONL file, {_EXPECTED}")
    if path.is_dir():
        raise UserInputError(f"{path}: is a directory; expected a JSONL file, {_EXPECTED}")
    # a device (a link to /dev/zero filled 24 GB), a pipe, or more than a task file may hold
    check_task_source(path, "data set")
    rows = []
    try:
        with TaskSourceReads(path, "data set").open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                where = f"{path}:{lineno}"
                rows.append(row_from_dict(decode_row(line, where), where))
    except UnicodeDecodeError as exc:
        raise UserInputError(
            f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); "
            f"expected a JSONL file, {_EXPECTED}"
        ) from None
    if not rows:
        raise UserInputError(f"{path}: no rows (the file is empty); expected {_EXPECTED}")
    return rows
