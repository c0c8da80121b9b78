"""Plan the presentations of a whole file of records at load, so that no two records show the same one.

Why: a task id hashes what the agent sees, so two records presented alike would
share an id, and the run would die when it reached the second. Presenting the
records one by one, each avoiding the ones before it, is not enough: a record
that can only be shown whole (no more findings than ``min_visible``, or
single-turn mode) has no way around a presentation an earlier record already
took. The file ``A B C D`` (hides ``D``) then ``A B C`` is that case.

The plan is a matching of records to presentations, computed once for the file:

* a record's **options**, in preference order, are the distinct presentations of
  its seeded hiding draws ``0..MAX_ATTEMPTS-1``
  (:func:`~.presentation.present_record`), then the whole record;
* records with one option (shown whole) take it first;
* every other record, in file order, takes its first option nobody holds; when
  all are held, a shortest chain of records that move to another of their own
  options frees one (an augmenting path, as in Kuhn's matching algorithm).

Every record's whole presentation is among its options, and two distinct
records (findings or exclusions differ) are distinct whole, so a full matching
always exists (Hall's condition holds with each record's whole as its witness):
a file loads unless two records are the same in full, and then load refuses,
naming both. A file with no collision is planned exactly as records presented
one by one (each takes its first free draw), so existing task ids stay.

Example:
    >>> from agentenv.envs.rare_disease.patients.simulated import Patient
    >>> four = Patient("OMIM:1", present=("HP:1", "HP:2", "HP:3", "HP:4"), source="f:1")
    >>> three = Patient("OMIM:2", present=("HP:1", "HP:2", "HP:3"), source="f:2")
    >>> a, b = plan_presentations([four, three], 0.4, 3)
    >>> sorted(b.present), sorted(a.present) != sorted(b.present)
    (['HP:1', 'HP:2', 'HP:3'], True)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from agentenv.envs.rare_disease.patients.presentation import MAX_ATTEMPTS, present_record
from agentenv.envs.rare_disease.patients.simulated import Patient
from agentenv.errors import UserInputError

Key = tuple[tuple[str, ...], tuple[str, ...]]


def shown_key(patient: Patient) -> Key:
    """What a presented record shows, order aside: its present and excluded terms."""
    return tuple(sorted(patient.present)), tuple(sorted(patient.excluded))


class _Options:
    """Each record's presentations in preference order, drawn on first need (most records need one)."""

    def __init__(self, records: Sequence[Patient], fraction: float, min_visible: int) -> None:
        self.records, self.fraction, self.min_visible = records, fraction, min_visible
        self.whole = [present_record(p, 0.0, min_visible) for p in records]
        self._drawn: dict[int, list[tuple[Key, Patient]]] = {}

    def forced(self, i: int) -> bool:
        """Can record ``i`` only be shown whole (nothing hidden, or too few findings to hide any)?"""
        return self.fraction <= 0 or len(self.whole[i].present) <= self.min_visible

    def of(self, i: int) -> list[tuple[Key, Patient]]:
        options = self._drawn.get(i)
        if options is None:
            options, seen = [], set()
            draws = [
                present_record(self.records[i], self.fraction, self.min_visible, attempt)
                for attempt in range(MAX_ATTEMPTS)
            ]
            for shown in [*draws, self.whole[i]]:
                key = shown_key(shown)
                if key not in seen:
                    seen.add(key)
                    options.append((key, shown))
            self._drawn[i] = options
        return options


def plan_presentations(
    records: Sequence[Patient], hidden_fraction: float, min_visible: int
) -> tuple[Patient, ...]:
    """Every record presented, no two alike (see the module docstring).

    Raises:
        UserInputError: two records the same in full (findings and exclusions), naming both
            by their source (``file:line``): no presentation can tell them apart.
    """
    options = _Options(records, hidden_fraction, min_visible)
    _refuse_twins(records, options)
    owner: dict[Key, int] = {}
    chosen: dict[int, tuple[Key, Patient]] = {}
    for i in range(len(records)):
        if options.forced(i):
            key = shown_key(options.whole[i])
            owner[key], chosen[i] = i, (key, options.whole[i])
    for i in range(len(records)):
        if i in chosen:
            continue
        free = next(((k, p) for k, p in options.of(i) if k not in owner), None)
        if free is not None:
            owner[free[0]], chosen[i] = i, free
        elif not _augment(i, options, owner, chosen):  # pragma: no cover - Hall's condition holds
            raise UserInputError(
                f"{records[i].source}: no presentation left that no other case shows; "
                "remove cases that repeat its findings"
            )
    return tuple(chosen[i][1] for i in range(len(records)))


def _refuse_twins(records: Sequence[Patient], options: _Options) -> None:
    first: dict[Key, int] = {}
    for i, whole in enumerate(options.whole):
        j = first.setdefault(shown_key(whole), i)
        if j != i:
            raise UserInputError(
                f"{records[j].source} and {records[i].source} record the same findings and excluded "
                "terms, so no presentation can tell them apart and they would share a task id; keep "
                "one of them, listing every accepted diagnosis in it"
            )


def _augment(
    start: int,
    options: _Options,
    owner: dict[Key, int],
    chosen: dict[int, tuple[Key, Patient]],
) -> bool:
    """Free an option for ``start`` by moving a shortest chain of holders to other options of theirs."""
    via: dict[int, tuple[int, Key] | None] = {start: None}
    queue = deque([start])
    while queue:
        r = queue.popleft()
        held = chosen.get(r, (None, None))[0]
        for key, shown in options.of(r):
            if key == held:
                continue
            holder = owner.get(key)
            if holder is None:
                _shift(r, key, shown, via, options, owner, chosen)
                return True
            if holder not in via and not options.forced(holder):
                via[holder] = (r, key)
                queue.append(holder)
    return False


def _shift(
    r: int,
    key: Key,
    shown: Patient,
    via: dict[int, tuple[int, Key] | None],
    options: _Options,
    owner: dict[Key, int],
    chosen: dict[int, tuple[Key, Patient]],
) -> None:
    """Move each record of the chain ending at ``r`` to the option it was reached by."""
    while True:
        owner[key], chosen[r] = r, (key, shown)
        step = via[r]
        if step is None:
            return
        r, key = step
        shown = dict(options.of(r))[key]
