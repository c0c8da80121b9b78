"""The no-shift baseline of ``shift-check``: how well the classifier tells A's own two halves apart.

Why: a task set split by *group* (MediaSearch puts every question about one film
in one split; a disease's patients stay together) gives two sets that ask about
different things, and a text classifier tells them apart by those things' names
alone. Validation against test on the default MediaSearch questions reads AUC
0.66, "a moderate shift"; two halves of validation split the same way, by
group, read 0.65. Without the baseline that AUC looks like a shift in what is
asked; beside it, it is what a grouped split gives by itself. So A is split in
two, by its rows' ``group`` field when every row has one (groups dealt to the
smaller half in a seeded order), else at random, and the same cross-fitted
classifier scores the halves. A against B is then read against that figure.

Example:
    >>> import numpy as np
    >>> halves, by = split_halves([None] * 40, np.random.default_rng(0))
    >>> by, sorted(map(len, halves))
    ('random rows', [20, 20])
    >>> halves, by = split_halves([f"g{i // 4}" for i in range(40)], np.random.default_rng(0))
    >>> by, sorted(map(len, halves))
    ("'group' (10 groups)", [20, 20])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from agentenv.data.shift_statistics import ClassifierTest, classifier_test


@dataclass
class ShiftBaseline:
    """The classifier test between two halves of A, and how A was split (or why it could not be)."""

    available: bool
    split_by: str = ""
    """``'group' (N groups)`` or ``random rows`` (some row of A had no ``group``)."""
    n_halves: tuple[int, int] = (0, 0)
    classifier: ClassifierTest | None = None
    reason: str = ""
    reading: str = ""
    """What A against B's AUC means beside this one."""


def split_halves(
    groups: Sequence[str | None], rng: np.random.Generator
) -> tuple[tuple[np.ndarray, np.ndarray], str]:
    """Row indices of two halves of A: whole groups dealt to the smaller half, or random rows.

    By group when every row has one: the groups are shuffled with ``rng`` and each
    goes, whole, to whichever half holds fewer rows so far, so the halves share no
    group and differ in size by at most the largest group.
    """
    n = len(groups)
    if n and all(g is not None for g in groups):
        members: dict[str, list[int]] = {}
        for i, g in enumerate(groups):
            members.setdefault(str(g), []).append(i)
        names = sorted(members)
        halves: tuple[list[int], list[int]] = ([], [])
        for k in rng.permutation(len(names)):
            smaller = halves[0] if len(halves[0]) <= len(halves[1]) else halves[1]
            smaller.extend(members[names[k]])
        return (np.sort(halves[0]), np.sort(halves[1])), f"'group' ({len(names)} groups)"
    order = rng.permutation(n)
    return (np.sort(order[: n // 2]), np.sort(order[n // 2 :])), "random rows"


def shift_baseline(
    Xa: sparse.spmatrix,
    groups: Sequence[str | None],
    against: ClassifierTest,
    *,
    rng: np.random.Generator,
    folds: int = 5,
    l2: float = 1.0,
) -> ShiftBaseline:
    """The classifier test between two halves of A (rows of ``Xa``), and A against B (``against``) read beside it."""
    (first, second), split_by = split_halves(groups, rng)
    need = max(folds, 5)
    if min(len(first), len(second)) < need:
        return ShiftBaseline(
            available=False,
            split_by=split_by,
            n_halves=(len(first), len(second)),
            reason=f"A's halves by {split_by} hold {len(first)} and {len(second)} rows; "
            f"the classifier needs at least {need} in each",
        )
    test = classifier_test(Xa[first], Xa[second], rng=rng, folds=folds, l2=l2)
    return ShiftBaseline(
        available=True,
        split_by=split_by,
        n_halves=(len(first), len(second)),
        classifier=test,
        reading=read_against(against, test),
    )


def read_against(a_vs_b: ClassifierTest, halves: ClassifierTest) -> str:
    """One line on A against B's AUC beside A's own halves' AUC.

    The rule is a reading, not a test: B is "within" the baseline when A against
    B's AUC is no higher than the top of the halves' 95% CI.

    Example:
        >>> within = ClassifierTest(0.65, 0.61, 0.68, 0.0, 500, 5)
        >>> print(read_against(ClassifierTest(0.66, 0.64, 0.68, 0.0, 1000, 5), within))
        A vs B (AUC 0.660) is within what A's own halves give (0.650, CI up to 0.680): the classifier finds no more between A and B than between two parts of A split the same way
    """
    if a_vs_b.auc <= halves.ci_high:
        return (
            f"A vs B (AUC {a_vs_b.auc:.3f}) is within what A's own halves give "
            f"({halves.auc:.3f}, CI up to {halves.ci_high:.3f}): the classifier finds no more "
            "between A and B than between two parts of A split the same way"
        )
    return (
        f"A vs B (AUC {a_vs_b.auc:.3f}) is above what A's own halves give ({halves.auc:.3f}, "
        f"CI up to {halves.ci_high:.3f}): B differs from A by more than A's parts differ "
        "from each other"
    )
