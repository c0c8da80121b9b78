"""Reward components of a rare-disease answer: hits, rank, and how many predictions it listed.

Why these components: the finding this task comes from is that a model
rewarded for "the true disease is among my k predictions" learns to list more
than k. So the components keep the two things apart:

* ``accuracy`` = ``hit@k``: an accepted diagnosis is among the *first k*
  entries. An over-limit answer still reports the hit@k of its first k
  entries: the env never truncates silently, and never hides the list length;
* ``n_predictions`` and ``over_limit`` (1.0 when ``n_predictions > k``) say
  that the list was too long; the reward preset decides what that costs
  (``strict``: the score is 0; ``lenient``: scored on ``hit@any``, the
  hackable reward, kept for teaching);
* ``hit@1``, ``hit@k`` (e.g. ``hit@3``), ``hit@any`` and ``reciprocal_rank``
  (1/rank of the first accepted diagnosis anywhere in the list, 0 if absent)
  for analysis;
* ``unresolved``: entries that named no disease. One such entry makes the
  answer unreadable (see :mod:`~agentenv.envs.rare_disease.grading.answers`): every
  hit is then 0;
* ``questions_asked``: ``ask_patient`` calls that were answered.

A patient may accept several diagnoses (``Patient.diagnoses``: imported
cases with more than one); the first entry naming any of them is the hit.
In the ``omim+orpha`` universe each accepted diagnosis brings its twin in the
other catalog (:mod:`~.disease_twins`: Floating-Harbor syndrome is OMIM:136140
and ORPHA:2044), so either id is credited.
An episode that ran out of turns has no answer: every hit is 0 and
``n_predictions`` is 0.

Example:
    >>> from agentenv.envs.rare_disease.grading.answers import Entry, ResolvedAnswer
    >>> answer = ResolvedAnswer(tuple(Entry(d, d, "id") for d in ("OMIM:1", "OMIM:2", "OMIM:3", "OMIM:4")))
    >>> c = grade(answer, ["OMIM:4"], k=3)
    >>> c["accuracy"], c["hit@any"], c["reciprocal_rank"], c["over_limit"]
    (0.0, 1.0, 0.25, 1.0)
    >>> grade(None, ["OMIM:4"], k=3)["n_predictions"]
    0.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentenv.envs.rare_disease.grading.answers import ResolvedAnswer, resolve_answer
from agentenv.envs.rare_disease.grading.disease_twins import with_twins

if TYPE_CHECKING:
    from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
    from agentenv.engine.parsing import Answer
    from agentenv.engine.turns import Episode


def component_names(k: int) -> tuple[str, ...]:
    """The task components reported for a limit of k, in a fixed order.

    Example:
        >>> component_names(3)
        ('accuracy', 'hit@1', 'hit@3', 'hit@any', 'reciprocal_rank', 'n_predictions', 'over_limit', 'unresolved', 'questions_asked')
    """
    hits = ("hit@1",) if k == 1 else ("hit@1", f"hit@{k}")
    return (
        "accuracy",
        *hits,
        "hit@any",
        "reciprocal_rank",
        "n_predictions",
        "over_limit",
        "unresolved",
        "questions_asked",
    )


def grade_answer_text(
    kb: HpoKnowledgeBase,
    diagnoses: Sequence[str],
    answer: Answer | None,
    k: int,
    questions_asked: int,
    feedback_to: Episode | None = None,
) -> dict[str, float]:
    """:func:`grade` of the agent's answer as sent (``None``: it never answered): read, then grade.

    The one grading path of the single-agent env and the doctor-patient
    dialogue. With ``feedback_to``, how the answer was read (or why it is
    unreadable) goes to that episode's ``answer_feedback``, which the env
    reports as ``info["answer_feedback"]``.
    """
    resolved = resolve_answer(kb, answer.text) if answer is not None else None
    if feedback_to is not None and resolved is not None:
        feedback_to.answer_feedback = resolved.feedback
    return grade(resolved, with_twins(kb, diagnoses), k, questions_asked)


def grade(
    answer: ResolvedAnswer | None, diagnoses: Sequence[str], k: int, questions_asked: int = 0
) -> dict[str, float]:
    """The task components of one episode (see the module docstring).

    Raises:
        ValueError: no accepted diagnosis, or ``k < 1`` (a grader bug, never agent input).
    """
    if not diagnoses:
        raise ValueError("grade() needs at least one accepted diagnosis")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    rank = answer.rank_of(diagnoses) if answer is not None else None
    n = answer.n_predictions if answer is not None else 0

    def hit(m: int) -> float:
        return float(rank is not None and rank <= m)

    components = {
        "accuracy": hit(k),
        "hit@1": hit(1),
        f"hit@{k}": hit(k),
        "hit@any": float(rank is not None),
        "reciprocal_rank": 1.0 / rank if rank is not None else 0.0,
        "n_predictions": float(n),
        "over_limit": float(n > k),
        "unresolved": float(answer.unresolved if answer is not None else 0),
        "questions_asked": float(questions_asked),
    }
    return {name: components[name] for name in component_names(k)}
