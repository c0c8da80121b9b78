"""Which questions a media env serves, as Tasks, and the answer format they all ask for.

Why apart from the env: ``MediaSearch-v0``, ``MediaSearch-SingleTurn-v0`` and
the ``MediaConcierge-v0`` dialogue serve the same generated questions, so
each builds its Tasks here from the shared question sets, and the dialogue
needs no single-agent env to borrow them from.

A question's Task: the question text is public; answer, aliases and answer
type are the gold; the :class:`~agentenv.envs.media_search.questions.record.Question`
(with its tool plan and extract rule) is the case.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentenv.core import Task
from agentenv.engine.frozen import freeze
from agentenv.envs.media_search.questions.cache import question_rows
from agentenv.envs.media_search.questions.record import DEFAULT_STYLE, Question, question_id
from agentenv.envs.media_search.tasks.user_tasks import (
    load_user_tasks,
    question_from_dict,
    questions_from_rows,
)

ANSWER_RULES = (
    "Give the final answer as <answer>…</answer> holding only the title, the person's name, "
    "or the number asked for in digits; a title that several films share needs its year: Title (Year)."
)
"""The answer format of every media task, the last line of each media system prompt."""

SPLITS = ("train", "validation", "test")
"""The generated splits."""
EVAL_SPLITS = ("casual",)
"""Evaluation-only splits: ``casual`` holds hand-written questions (:mod:`agentenv.envs.media_search.tasks.casual`)."""

TaskSource = str | Path | Sequence[Mapping[str, Any]]
"""What ``tasks=`` accepts: a JSONL path, or question dicts."""


_SHARED_TASKS: weakref.WeakKeyDictionary[Sequence[Question], dict[str, dict[int, Task]]] = (
    weakref.WeakKeyDictionary()
)
"""The Tasks already made of each process-wide question set (a split's rows), per split name."""


def _task_cache(questions: Sequence[Question], split: str) -> dict[int, Task]:
    """The cache of ``questions``' Tasks as ``split``, shared by every env over the same question set.

    Why: a split's rows are one object per process, but each env used to make its own Task of a
    question (about 40 µs: the gold frozen, the record checked), so 64 envs that take tasks in any
    order, as a server's pool hands them out, made each Task up to 64 times. A Task is read-only,
    so one per question and process serves every env. Questions that cannot be weakly referenced
    (a user's list, the casual tuple) keep a cache per env.

    Example:
        >>> rows = question_rows("validation")
        >>> _task_cache(rows, "validation") is _task_cache(rows, "validation")
        True
        >>> _task_cache([], "custom") is _task_cache([], "custom")
        False
    """
    try:
        per_split = _SHARED_TASKS.setdefault(questions, {})
    except TypeError:  # not weakly referable (a list, a tuple): a cache of its own
        return {}
    return per_split.setdefault(split, {})


class QuestionTasks(Sequence[Task]):
    """Questions viewed as Tasks, converted on first access so ``gym.make`` stays fast."""

    def __init__(
        self, questions: Sequence[Question], split: str, style: str = DEFAULT_STYLE
    ) -> None:
        self._questions = questions
        self.split = split
        """The split name, or ``custom`` for the user's questions."""
        self.style = style
        """The question style of a generated split (see :data:`~agentenv.envs.media_search.questions.record.STYLES`)."""
        self._cache = _task_cache(questions, split)
        checksum = getattr(questions, "checksum", None)
        self.index_key: str | None = (
            f"media_search|{split}|{style}|{checksum}" if isinstance(checksum, str) else None
        )
        """What decides these tasks (a generated split's checksum), for the on-disk task-id index
        (:mod:`agentenv.engine.task_index`); None for a user's questions."""
        self.index_owner = questions if self.index_key is not None else None
        """Whose lifetime the in-memory index follows: the split's rows, which every env of the
        process shares (each env has a QuestionTasks of its own)."""

    def __len__(self) -> int:
        return len(self._questions)

    def __getitem__(self, index: int) -> Task:  # type: ignore[override]
        task = self._cache.get(index)
        if task is None:
            task = question_task(self._questions[index], self.split)
            self._cache[index] = task
        return task


def question_task(q: Question, split: str) -> Task:
    """The Task of one question (see the module docstring).

    The gold is read-only throughout (:func:`~agentenv.engine.frozen.freeze`), as the question
    behind it is, so an episode's ``info["gold"]`` is a new top-level dict over its read-only
    values instead of a deep copy (which took a seventh of an answer step); editing the aliases
    there is a ``TypeError`` that says so.
    """
    return Task(
        prompt=q.question,
        gold=freeze({"answer": q.answer, "aliases": list(q.aliases), "answer_type": q.answer_type}),
        split=split,
        family="media_search",
        kind=q.kind,
        difficulty=q.difficulty,
        case=q,
        row_id=row_id_of(q),
    )


def row_id_of(q: Question) -> str:
    """The ``id`` a user's row gave ``q`` ("" otherwise: a row without one gets the content-hash
    :func:`~agentenv.envs.media_search.questions.record.question_id`, a split's question too)."""
    if q.split != "custom" or q.id == question_id(q.kind, q.question, q.answer):
        return ""
    return q.id


def question_tasks(
    split: str, tasks: TaskSource | None = None, style: str = DEFAULT_STYLE
) -> QuestionTasks:
    """The questions of ``split`` (generated ones in ``style``), or the user's (``tasks=``, split ``custom``), as Tasks."""
    if tasks is None:
        return QuestionTasks(split_questions(split, style), split, style)
    if isinstance(tasks, (str, Path)):
        return QuestionTasks(load_user_tasks(tasks), "custom")
    return QuestionTasks(questions_from_rows(tasks), "custom")


def split_questions(split: str, style: str = DEFAULT_STYLE) -> Sequence[Question]:
    """The questions of a split (generated ones decoded on first access); an unknown split name is a ``ValueError``."""
    if split == "casual":
        from agentenv.envs.media_search.tasks.casual import casual_questions

        return casual_questions()
    if split not in SPLITS:
        raise ValueError(f"split must be 'train', 'validation', 'test' or 'casual', got {split!r}")
    return question_rows(split, style=style)


def question_set_checksum(split: str, style: str = DEFAULT_STYLE) -> str | None:
    """The sha256 that names a split's question set, recorded with every result (``corpus_checksums["questions"]``).

    Why: the leaderboard refuses to compare runs whose corpora differ, so tagging
    the question set there keeps results on the template questions and on the
    casual ones (or on the hand-written split) off one board. ``None`` for your
    own tasks (their file's sha256 is recorded apart).
    """
    if split == "casual":
        from agentenv.envs.media_search.tasks.casual import CASUAL_SHA256

        return CASUAL_SHA256
    from agentenv.envs.media_search.questions.record import PUBLISHED_CHECKSUMS

    return PUBLISHED_CHECKSUMS.get(style, {}).get(split)


def question_task_from_dict(data: Mapping[str, Any]) -> Task:
    """The Task of one user question dict (``options={"task": {...}}``)."""
    return question_task(question_from_dict(data, where="options['task']"), "custom")
