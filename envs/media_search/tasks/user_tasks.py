"""Bring your own MediaSearch questions: one JSON object per line.

Why so strict: a typo in a task file (``"anwser"``, a number where a string
belongs) would otherwise become a question that nobody can answer, and the
benchmark would silently measure the typo. Every problem raises
:class:`~agentenv.errors.UserInputError` (a ``ValueError``; the ``agentenv``
command prints it as one line) with the file and line, the field, and what to
write instead.

Row format::

    {"question": "Who directed Inception?", "answer": "Christopher Nolan"}
    {"question": "How many ...?", "answer": "7", "aliases": ["seven"], "id": "q-2"}
    {"question": "that 1995 heist movie with pacino and de niro?", "answer": "Heat (1995)"}
    {"question": "Is it any good?", "answer": "yes", "answer_type": "text"}

``id`` is optional, as in rare-disease task rows: a string under
:func:`agentenv.engine.task_files.check_row_id`'s grammar, unique within the file or
list; it becomes the question's ``id`` (else a content hash) and names the
row in messages. A file is bounded as every task source is
(:func:`agentenv.engine.task_files.check_task_source`), from the command or from
``gym.make``; so is a list's length.

Your questions have no gold tool plan (``plan is None``), ``kind == "custom"``,
and an ``answer_type`` typed from the catalog
(:mod:`agentenv.envs.media_search.tasks.user_answer_types`): a gold that resolves to
a film is graded as a film (its title, ``Title (Year)`` or id), a credited
name as a person, digits as a ``"year"`` (1800 to 2100) or ``"number"``
(graded numerically: ``7``, ``seven`` and ``**7**`` pass, ``7 films`` is
refused). A row may state ``answer_type`` (``"title"``, ``"person"``,
``"number"``, ``"year"``, or ``"text"``: graded by spelling against the answer
and aliases, for a gold outside the catalog); a gold the catalog cannot type is
refused at load, naming the row.

Example:
    >>> q = question_from_dict({"question": "Year of Jaws?", "answer": "1975"})
    >>> q.answer_type, q.kind, q.plan
    ('year', 'custom', None)
    >>> q = question_from_dict({"question": "that 1995 heist movie?", "answer": "Heat (1995)"})
    >>> q.answer_type, q.aliases
    ('title', ('tt0113277',))
    >>> question_from_dict({"question": "Q?", "answer": "A", "anwser": "A"}, where="line 3")
    Traceback (most recent call last):
    ...
    agentenv.errors.UserInputError: line 3: unknown field 'anwser' (did you mean 'answer'?); allowed fields are 'question', 'answer', 'aliases', 'answer_type' and 'id' (fix the spelling or remove it)
    >>> question_from_dict({"question": "Year of Jaws?", "answer": "1975", "id": "jaws-year"}).id
    'jaws-year'
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

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
from agentenv.envs.media_search.grading.grade import FILM_ID, MAX_REFERENCE_CHARS
from agentenv.envs.media_search.questions.record import Question, question_id
from agentenv.envs.media_search.tasks.user_answer_types import typed_answer
from agentenv.errors import UserInputError
from agentenv.terminal_text import control_at

_EXAMPLE = (
    '{"question": "Who directed Inception?", "answer": "Christopher Nolan", "aliases": ["Nolan"]}'
)
_FIELDS = ("question", "answer", "aliases", "answer_type", "id")


def question_from_dict(row: Mapping[str, Any], where: str = "task") -> Question:
    """Validate one user question and return it as a :class:`Question`.

    ``where`` names the row in error messages (e.g. ``"tasks.jsonl:4"``).

    Raises:
        UserInputError: a missing, unknown or mistyped field, naming ``where`` and the fix.
    """
    if not isinstance(row, Mapping):
        raise UserInputError(
            f"{where}: expected a JSON object like {_EXAMPLE}, got {type(row).__name__}"
        )
    for name in row:
        if name not in _FIELDS:
            close = difflib.get_close_matches(str(name), _FIELDS, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise UserInputError(
                f"{where}: unknown field {name!r}{hint}; allowed fields are 'question', 'answer', "
                "'aliases', 'answer_type' and 'id' (fix the spelling or remove it)"
            )
    for name in ("question", "answer"):
        if name not in row:
            raise UserInputError(
                f"{where}: missing field {name!r}; every row needs 'question' and 'answer', "
                f"e.g. {_EXAMPLE}"
            )
        value = row[name]
        if not isinstance(value, str) or not value.strip():
            example = '"answer": "7"' if name == "answer" else '"question": "How many films?"'
            raise UserInputError(
                f"{where}: field {name!r} must be a non-empty string, got {value!r}; "
                f"write it in double quotes, e.g. {example}"
            )
    aliases = row.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) and a.strip() for a in aliases):
        raise UserInputError(
            f"{where}: field 'aliases' must be a list of non-empty strings, got {aliases!r}; "
            'e.g. "aliases": ["Nolan", "C. Nolan"], or leave the field out'
        )
    if len(aliases) > MAX_ALIASES:
        raise UserInputError(
            f"{where}: field 'aliases' has {len(aliases)} entries; it may have at most "
            f"{MAX_ALIASES}: keep the forms a reader would write"
        )
    for name, text in [("question", row["question"]), ("answer", row["answer"])] + [
        (f"aliases[{i}]", a) for i, a in enumerate(aliases)
    ]:
        _check_text(text, name, where)
    row_id = check_row_id(row["id"], where) if "id" in row else None
    question, answer = row["question"].strip(), row["answer"].strip()
    typed = typed_answer(answer, row.get("answer_type"), where)
    aliases = [a.strip() for a in aliases]
    for alias in aliases:
        if FILM_ID.fullmatch(alias.lower()) and alias.lower() not in typed.film_ids:
            gold = (
                f"the gold's film {typed.film_ids[0]}"
                if typed.film_ids
                else "a gold that names no one film"
            )
            raise UserInputError(
                f"{where}: alias {alias!r} is a film id, but not of {gold}; a film id in 'aliases' "
                "would make that film the answer. Remove it, or make it the gold's id"
            )
    return Question(
        id=row_id or question_id("custom", question, answer),
        question=question,
        answer=answer,
        # the gold's film id first: the grader takes the first id among answer and aliases
        aliases=tuple([f for f in typed.film_ids if f not in aliases] + aliases),
        answer_type=typed.answer_type,  # type: ignore[arg-type]
        kind="custom",
        difficulty="unknown",
        plan=None,
        extract=None,
        split="custom",
        group="custom",
    )


MAX_QUESTION_CHARS = 2_000
"""The longest question a row may hold. Hand-written questions run to about 300 characters; the
single-turn env retrieves its passages with the whole question, and that search grows faster than
the text (5 ms at 2,000 characters, 58 ms at 8,000, minutes at a megabyte)."""
MAX_ANSWER_CHARS = MAX_REFERENCE_CHARS
"""The longest answer or alias: the longest answer the grader reads (300 characters), so no gold is
one that no answer could match (the catalog's longest film title has 79 characters, its longest
name 52)."""
MAX_ALIASES = 100
"""The most aliases a row may list."""
MAX_ANSWER_DIGITS = 30
"""The most digits a number in an answer or alias may have: no count, runtime or year comes near,
and Python refuses to read an integer of more than 4,300 digits (a 5,000-digit alias raised on
every step)."""


def _check_text(text: str, field: str, where: str) -> None:
    """A row's text field as a task may hold it: UTF-8 text (a lone surrogate from a ``\\ud800``
    escape failed only when the run was written) and numbers a grader can read."""
    limit = MAX_QUESTION_CHARS if field == "question" else MAX_ANSWER_CHARS
    if len(text.strip()) > limit:
        raise UserInputError(
            f"{where}: field {field!r} has {len(text.strip()):,} characters; it may have at most "
            f"{limit:,}"
            + ("" if field == "question" else " (no longer answer is read, so none could match it)")
            + ": shorten it"
        )
    if field != "question" and "\n" in text.strip():
        raise UserInputError(
            f"{where}: field {field!r} spans more than one line; an answer is read from one line, "
            "so no answer could match it: write it on one line"
        )
    if surrogate_at(text) >= 0:
        raise UserInputError(
            f"{where}: field {field!r} holds a lone UTF-16 surrogate (a \\ud800-\\udfff escape "
            "without its pair), which is no text; fix the escape or remove it"
        )
    _check_controls(text, field, where)
    if field != "question" and not any(ch.isalnum() for ch in text):
        raise UserInputError(
            f"{where}: field {field!r} ({text.strip()!r}) has no letter or digit; the grader reads "
            "an answer by its words and numbers, so no answer could match it: "
            + ("write the answer in words or digits" if field == "answer" else "remove it")
        )
    if field != "question" and any(
        len(run) > MAX_ANSWER_DIGITS for run in _DIGIT_RUNS.findall(text)
    ):
        raise UserInputError(
            f"{where}: field {field!r} holds a number of more than {MAX_ANSWER_DIGITS} digits; "
            "no answer is that long"
        )


_DIGIT_RUNS = re.compile(r"[0-9,]+")


def _check_controls(text: str, field: str, where: str) -> None:
    """Refuse a control character in a row's text (:func:`agentenv.terminal_text.control_at`: ESC,
    ``\\r``, BEL, other C0 and C1 controls, DEL, U+2028/U+2029, bidi overrides and isolates),
    naming the field, the character and its position (from 1, in the field as written).

    Why: a question is printed by ``agentenv play`` and ``check-tasks`` and sent to the model, an
    answer and its aliases are quoted in feedback and results; an ESC sequence in them retitles or
    clears a terminal and a ``\\r`` or U+202E rewrites what a reader sees. A question may keep line
    breaks and tabs (``\\n``, ``\\t``): a prompt of several lines is text; an answer or alias is
    read from one line, so it keeps tabs alone (whitespace to the grader, as a space is). Spaces at
    either end, which the row loses, are not looked at.

    Example:
        >>> _check_controls("Who directed Heat?\\x1b[8m", "question", "t.jsonl:3")
        Traceback (most recent call last):
        ...
        agentenv.errors.UserInputError: t.jsonl:3: field 'question' holds a control character U+001B at position 19; remove it (a question may hold line breaks and tabs, no other control character)
    """
    body = text.strip()
    if field == "question":  # a line break written on Windows is a line break
        body = body.replace("\r\n", "\n\n")  # same length: positions stay as written
    at = control_at(body, keep="\n\t" if field == "question" else "\t")
    if at < 0:
        return
    code = ord(body[at])
    position = len(text) - len(text.lstrip()) + at + 1
    hint = (
        "a question may hold line breaks and tabs, no other control character"
        if field == "question"
        else "an answer or alias may hold tabs, no other control character"
    )
    raise UserInputError(
        f"{where}: field {field!r} holds a control character U+{code:04X} at position "
        f"{position}; remove it ({hint})"
    )


def load_user_tasks(path: str | Path) -> list[Question]:
    """Read a JSONL file of questions (blank lines are skipped).

    Raises:
        UserInputError: a line that is not JSON or not a valid question, naming ``path:line`` and the fix.
    """
    if isinstance(path, str) and not path.strip():
        raise UserInputError(
            f"tasks={path!r} names no file; give a JSONL file of questions like {_EXAMPLE}"
        )
    path = Path(path)
    if path.is_dir():
        raise UserInputError(
            f"{path}: is a directory; MediaSearch --tasks takes one JSONL file of questions, "
            f"one JSON object per line, like {_EXAMPLE}"
        )
    if not path.exists():
        raise FileNotFoundError(
            f"tasks={str(path)!r}: no such file; give a JSONL file of questions like {_EXAMPLE}"
        )
    check_task_source(path)
    questions: list[tuple[str, Question]] = []
    ids = RowIds()
    bad = BadRows(
        str(path)
    )  # every bad row named at once (or skipped, see agentenv.engine.task_files)
    # bounded as read, not only as checked (a file that grew since is refused, not read whole);
    # utf-8-sig: a leading BOM (Windows editors) is no text
    with TaskSourceReads(path).open(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            check_row_count(len(questions) + 1, str(path))
            with bad.row():
                try:
                    row = loads_unique(line.rstrip("\r\n"))
                except RepeatedKey as exc:
                    raise UserInputError(f"{where}: {exc}") from None
                except json.JSONDecodeError as exc:
                    raise UserInputError(
                        f"{where}: invalid JSON ({exc.msg} at column {exc.colno}); each line must be "
                        f"one JSON object like {_EXAMPLE}"
                    ) from None
                except RecursionError:
                    raise UserInputError(
                        f"{where}: JSON nested too deeply; each line must be one flat JSON object "
                        f"like {_EXAMPLE}"
                    ) from None
                questions.append((where, _checked_row(row, where, ids)))
    skipped = bad.finish()
    if not questions:
        why = f"all {skipped} rows were bad and skipped" if skipped else "the file is empty"
        raise UserInputError(
            f"{path}: no questions ({why}); write one JSON object per line, like {_EXAMPLE}"
        )
    check_distinct_questions(questions)
    return [q for _, q in questions]


def questions_from_rows(rows: Sequence[Any]) -> list[Question]:
    """The questions of a list of row dicts (``tasks=[...]`` from Python), checked as a file's rows are."""
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Sequence):
        raise UserInputError(
            f"tasks must be a path to a JSONL file or a list of question dicts like {_EXAMPLE}; "
            f"got {type(rows).__name__}"
        )
    check_row_count(len(rows), "tasks")
    ids = RowIds()
    bad = BadRows("tasks")
    questions: list[tuple[str, Question]] = []
    for i, row in enumerate(rows):
        with bad.row():
            questions.append((f"tasks[{i}]", _checked_row(row, f"tasks[{i}]", ids)))
    bad.finish()
    check_distinct_questions(questions)
    return [q for _, q in questions]


def _checked_row(row: Any, where: str, ids: RowIds) -> Question:
    """One row as a question, its ``id`` (if any) not already another row's."""
    question = question_from_dict(row, where)
    if "id" in row:
        ids.add(question.id, where)
    return question


def check_distinct_questions(rows: list[tuple[str, Question]]) -> None:
    """Refuse two rows that ask the same question (``(where, question)`` pairs), naming both.

    Why: a task id hashes the question text, so two such rows would share an id; with
    different answers no answer is right for both, with the same one they are duplicates.

    Raises:
        UserInputError: naming the first repeated question's rows and the fix.
    """
    first: dict[str, tuple[str, Question]] = {}
    for where, q in rows:
        seen = first.setdefault(q.question, (where, q))
        if seen[1] is not q:
            answers = "different answers" if seen[1].answer != q.answer else "the same answer"
            raise UserInputError(
                f"{where}: the same question as {seen[0]} ({answers}): {q.question!r}; the two "
                "would share a task id. Keep one row, with every accepted answer in 'aliases'"
            )
