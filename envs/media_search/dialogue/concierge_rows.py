"""Which questions of a split ``MediaConcierge-v0`` serves, remembered next to the question cache.

Why: the concierge serves the constraint and superlative questions whose gold
plan is one ``filter_titles`` call (a request the simulated user can hold
back). Finding them meant decoding 8,401 of the 24,000 train questions, about
0.25 s of every warm make. The positions found are written once per question
file, keyed by that file's sha256, so a later make reads a list of integers and
decodes no question until an episode asks for it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import overload

from agentenv.envs.media_search.dialogue.film_requests import request_of
from agentenv.envs.media_search.questions.cache import QuestionRows
from agentenv.envs.media_search.questions.record import Question
from agentenv.storage.checksummed_cache import unpack, write_pack

__all__ = ["CONCIERGE_KINDS", "RowsView", "concierge_questions", "of_kinds"]

CONCIERGE_KINDS = ("constraint", "superlative")
"""The question kinds a user can ask the concierge for."""

FORMAT = 1
"""Version of the remembered positions (bump when :func:`_servable` changes)."""


class RowsView(Sequence[Question]):
    """``rows[i]`` for the given positions, in order, each decoded when first read."""

    def __init__(self, rows: Sequence[Question], positions: Sequence[int]) -> None:
        self._rows = rows
        self._positions = list(positions)

    def __len__(self) -> int:
        return len(self._positions)

    @overload
    def __getitem__(self, index: int) -> Question: ...
    @overload
    def __getitem__(self, index: slice) -> list[Question]: ...
    def __getitem__(self, index: int | slice) -> Question | list[Question]:
        if isinstance(index, slice):
            return [self._rows[p] for p in self._positions[index]]
        return self._rows[self._positions[index]]

    def __iter__(self) -> Iterator[Question]:
        return (self._rows[p] for p in self._positions)


def of_kinds(questions: Sequence[Question], kinds: Iterable[str]) -> list[int]:
    """Positions of the questions of ``kinds``, decoding only those whose cached line can be of one.

    A cached line is canonical JSON (:func:`~agentenv.envs.media_search.questions.record.canonical_json`: sorted
    keys, no spaces), so a question of kind ``k`` holds the bytes ``"kind":"k"``, which no string value can
    (its quotes are escaped).
    """
    wanted = set(kinds)
    if isinstance(questions, QuestionRows):
        marks = [
            json.dumps({"kind": k}, ensure_ascii=False, separators=(",", ":"))[1:-1].encode()
            for k in wanted
        ]
        maybe: Iterable[int] = (
            i for i, line in enumerate(questions.lines()) if any(m in line for m in marks)
        )
    else:
        maybe = range(len(questions))
    return [i for i in maybe if questions[i].kind in wanted]


def _servable(questions: Sequence[Question]) -> dict[str, list[int]]:
    """Per concierge kind, the positions of its questions that carry a request."""
    found: dict[str, list[int]] = {kind: [] for kind in CONCIERGE_KINDS}
    for i in of_kinds(questions, CONCIERGE_KINDS):
        q = questions[i]
        if request_of(q) is not None:
            found[q.kind].append(i)
    return found


def _remembered(rows: QuestionRows) -> dict[str, list[int]] | None:
    """The positions stored for these rows' file, when stored and well formed."""
    if not rows.checksum or not rows.where:
        return None
    path = Path(rows.where).with_name(f"concierge-rows-v{FORMAT}-{rows.checksum[:24]}.json")
    header = {"format": FORMAT, "questions_sha256": rows.checksum}
    stored = unpack(path, header)
    size = len(rows)
    if (
        isinstance(stored, dict)
        and set(stored) == set(CONCIERGE_KINDS)
        and all(
            isinstance(v, list) and all(type(i) is int and 0 <= i < size for i in v)
            for v in stored.values()
        )
    ):
        return stored
    found = _servable(rows)
    try:
        write_pack(path, header, found)
    except OSError:  # a read-only home still serves; the next make works it out again
        pass
    return found


def concierge_questions(questions: Sequence[Question], kinds: Sequence[str]) -> Sequence[Question]:
    """The questions of ``kinds`` that the concierge can serve, in split order, decoded on first access.

    Example (not run: it needs the generated questions):
        ``len(concierge_questions(split_questions("train"), ("constraint",)))``
    """
    by_kind = (
        _remembered(questions) if isinstance(questions, QuestionRows) else None
    ) or _servable(questions)
    positions = sorted(i for kind in set(kinds) for i in by_kind.get(kind, ()))
    return RowsView(questions, positions)
