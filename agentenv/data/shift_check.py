"""How far one task set is from another: ``agentenv data shift-check A.jsonl B.jsonl``.

Why: holdout-loss data selection (keep the training rows that lower the loss
on a holdout set) helps only when the holdout set looks like the test set; when
it does not, selection chases the wrong distribution. This check measures the
gap before the selection is trusted, three ways:

1. **Kind and difficulty histograms** of A and B, with the Jensen-Shannon
   divergence (base 2: 0 for the same histogram, 1 for disjoint support) and
   the total variation distance (the share of rows that would have to change
   category) of each. A field missing from a file makes that section "not
   available", not an error.
2. **A classifier two-sample test**: texts become hashed character n-gram +
   word TF-IDF vectors (:mod:`agentenv.data.text_embedding`), the larger set is
   subsampled (seeded) to the size of the smaller, and an L2-regularised
   logistic regression is cross-fitted over K stratified folds (K=5), so every
   row is scored by a model that never saw it. The out-of-fold AUC is 0.5 when
   the model cannot tell A from B and 1 when it always can; its 95% confidence
   interval is DeLong's (analytic, deterministic; it treats the out-of-fold
   scores as fixed, so it ignores the variance of refitting and runs slightly
   narrow). A one-sided p-value for AUC > 0.5 comes with it.
3. **MMD²** between the two embedding sets: RBF kernel with the
   median-heuristic bandwidth, unbiased estimator, and a permutation p-value
   (seeded; each side subsampled to at most 1,000 rows for speed).
4. **A no-shift baseline**: the same classifier between two halves of A, split
   by the rows' ``group`` when every row has one (a grouped split's sets differ
   by their groups' names alone), else at random; A against B is read beside it
   (:mod:`agentenv.data.shift_baseline`).

Randomness comes only from ``numpy.random.Generator`` objects spawned from the
``seed`` argument, so the same files and seed give the same report.

Inputs are JSONL files whose rows may be task rows (``{"question": ..., "kind":
..., "difficulty": ...}`` as MediaSearch task files write them, or ``prompt``
/ ``query`` / ``instruction`` / ``text``, possibly nested under ``task``) or
SFT chat rows (``{"messages": [...], "tools": [...]}`` as ``agentenv
export-sft`` writes them; the text is the first user message). The shape is
detected row by row.

Example:
    >>> a = [TaskRow("Who directed Alien?", "lookup", "easy")] * 20
    >>> b = [TaskRow("Which 1990 film is longest?", "superlative", "hard")] * 20
    >>> report = compare_rows(a, b, name_a="a", name_b="b", seed=0, permutations=50)
    >>> report.kind.js_divergence, report.kind.total_variation
    (1.0, 1.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agentenv.data.shift_baseline import ShiftBaseline, shift_baseline
from agentenv.data.shift_rows import (
    NESTED_KEYS,
    TEXT_KEYS,
    TaskRow,
    read_rows,
    row_from_dict,
)
from agentenv.data.shift_statistics import (
    CategoryShift,
    ClassifierTest,
    MMDTest,
    auc_delong,
    category_shift,
    classifier_test,
    fit_logistic,
    interpret_auc,
    js_divergence,
    mmd_test,
)
from agentenv.data.text_embedding import HashedNgramEmbedder
from agentenv.errors import UserInputError
from agentenv.terminal_text import terminal_text

__all__ = [
    "NESTED_KEYS",
    "TEXT_KEYS",
    "CategoryShift",
    "ClassifierTest",
    "MMDTest",
    "ShiftBaseline",
    "ShiftReport",
    "TaskRow",
    "auc_delong",
    "category_shift",
    "classifier_test",
    "compare_rows",
    "fit_logistic",
    "interpret_auc",
    "js_divergence",
    "mmd_test",
    "read_rows",
    "row_from_dict",
    "shift_check",
]

# --------------------------------------------------------------------------- report


@dataclass
class ShiftReport:
    """What ``agentenv data shift-check`` found; :meth:`to_dict` for JSON, :meth:`format` for people."""

    name_a: str
    name_b: str
    n_a: int
    n_b: int
    seed: int
    kind: CategoryShift
    difficulty: CategoryShift
    classifier: ClassifierTest
    mmd: MMDTest
    embedding: dict[str, Any] = field(default_factory=dict)
    baseline: ShiftBaseline | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every figure."""
        return asdict(self)

    def format(self) -> str:
        """The report as text, one section per test; the file names and the kind and difficulty
        values come from the user, so they are shown through :func:`terminal_text` (escaped once,
        here, where they are printed)."""
        lines = [
            f"shift-check  seed {self.seed}",
            f"  A: {terminal_text(self.name_a)} ({self.n_a} rows)",
            f"  B: {terminal_text(self.name_b)} ({self.n_b} rows)",
            "",
        ]
        for shift in (self.kind, self.difficulty):
            lines.extend(_format_category(shift))
            lines.append("")
        c = self.classifier
        p = "< 0.001" if c.p_value < 0.001 else f"{c.p_value:.3f}"
        lines += [
            f"classifier two-sample test ({c.n_per_side} vs {c.n_per_side} rows, {c.folds}-fold cross-fitted "
            "L2 logistic regression on hashed n-gram TF-IDF)",
            f"  out-of-fold AUC {c.auc:.3f}  95% CI [{c.ci_low:.3f}, {c.ci_high:.3f}] ({c.ci_method})  "
            f"p(AUC > 0.5) {p}",
            f"  -> {c.interpretation}",
            "",
        ]
        mm = self.mmd
        lines += [
            f"MMD^2 (RBF kernel, median-heuristic bandwidth {mm.bandwidth:.3f}, unbiased; "
            f"{mm.n_a} vs {mm.n_b} rows)",
            f"  MMD^2 {mm.mmd2:.4f}  permutation p {_p_shown(mm.p_value)} ({mm.permutations} permutations)",
            f"  -> {'the embedding distributions differ' if mm.p_value < 0.05 else 'no significant difference'}"
            " at the 5% level",
        ]
        if self.baseline is not None:
            lines += ["", *_format_baseline(self.baseline)]
        return "\n".join(lines)


def _p_shown(p: float) -> str:
    """A p-value as the report prints it: three decimals, or a bound ``< 0.001``, ``< 0.0001``,
    ``< 1e-05``... (the smallest power of ten above it) where three decimals would read 0.000.

    Why a bound: a permutation p-value is ``(1 + count) / (1 + permutations)``, never 0; with
    100,000 permutations and none as extreme it is 1/100,001, which "0.000" misstated.

    Example:
        >>> _p_shown(0.0421), _p_shown(1 / 201), _p_shown(1 / 1001), _p_shown(1 / 100_001)
        ('0.042', '0.005', '< 0.001', '< 1e-05')
        >>> _p_shown(1e-05)
        '< 0.0001'
    """
    if p >= 0.001:
        return f"{p:.3f}"
    exponent = -3
    while p < float(f"1e{exponent - 1}"):
        exponent -= 1
    bound = float(f"1e{exponent}")
    return f"< {bound:g}"


def _format_baseline(base: ShiftBaseline) -> list[str]:
    if not base.available or base.classifier is None:
        return [f"no-shift baseline: not available ({terminal_text(base.reason)})"]
    c = base.classifier
    a, b = base.n_halves
    return [
        f"no-shift baseline: A split in two by {base.split_by}, {a} vs {b} rows, the same classifier",
        f"  out-of-fold AUC {c.auc:.3f}  95% CI [{c.ci_low:.3f}, {c.ci_high:.3f}] ({c.ci_method})",
        f"  -> {base.reading}",
    ]


def _format_category(shift: CategoryShift) -> list[str]:
    if not shift.available:
        return [f"{shift.field}: not available ({terminal_text(shift.reason)})"]
    na, nb = sum(shift.counts_a.values()), sum(shift.counts_b.values())
    # Each value escaped before the widths are taken, so the columns line up as printed.
    shown = {cat: terminal_text(cat) for cat in shift.counts_a}
    width = max(12, *(len(s) for s in shown.values()))
    out = [f"{shift.field + ':':{width + 2}s} {'A':>14s} {'B':>14s}"]
    for cat, label in shown.items():
        a, b = shift.counts_a[cat], shift.counts_b[cat]
        out.append(
            f"  {label:{width}s} {a:6d} ({100 * a / na:5.1f}%) {b:6d} ({100 * b / nb:5.1f}%)"
        )
    out.append(
        f"  JS divergence {shift.js_divergence:.3f} bits (0 same, 1 disjoint)   "
        f"total variation {shift.total_variation:.3f}"
    )
    return out


def compare_rows(
    rows_a: Sequence[TaskRow],
    rows_b: Sequence[TaskRow],
    *,
    name_a: str = "A",
    name_b: str = "B",
    seed: int = 0,
    folds: int = 5,
    permutations: int = 200,
    max_mmd_rows: int = 1000,
    dim: int = 2**12,
    l2: float = 1.0,
    baseline: bool = True,
) -> ShiftReport:
    """The shift report of two in-memory row lists (what :func:`shift_check` runs on the files' rows).

    ``baseline``: also score two halves of A (the no-shift baseline; one more classifier fit).

    Raises:
        UserInputError: a list too short for the classifier's folds, naming it.
    """
    need = max(folds, 5)
    short = [
        (name, len(rows)) for name, rows in ((name_a, rows_a), (name_b, rows_b)) if len(rows) < need
    ]
    if short:
        name, n = short[0]
        raise UserInputError(
            f"{name}: {n} rows; the classifier test needs at least {need} rows per file "
            f"({name_a}: {len(rows_a)}, {name_b}: {len(rows_b)})"
        )
    # A third generator for the baseline: spawned children keep their index, so the first two
    # (and the classifier and MMD figures) are those of a report without a baseline.
    g_clf, g_mmd, g_base = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3))
    embedder = HashedNgramEmbedder(dim=dim)
    texts = [r.text for r in rows_a] + [r.text for r in rows_b]
    X = embedder.fit_transform(texts)
    Xa, Xb = X[: len(rows_a)], X[len(rows_a) :]
    classifier = classifier_test(Xa, Xb, rng=g_clf, folds=folds, l2=l2)
    return ShiftReport(
        name_a=name_a,
        name_b=name_b,
        n_a=len(rows_a),
        n_b=len(rows_b),
        seed=seed,
        kind=category_shift(
            "kind", [r.kind for r in rows_a], [r.kind for r in rows_b], name_a, name_b
        ),
        difficulty=category_shift(
            "difficulty",
            [r.difficulty for r in rows_a],
            [r.difficulty for r in rows_b],
            name_a,
            name_b,
        ),
        classifier=classifier,
        mmd=mmd_test(Xa, Xb, rng=g_mmd, permutations=permutations, max_rows=max_mmd_rows),
        embedding={
            "kind": "hashed char 3-5 grams + word unigrams, sublinear TF x IDF (fitted on A and B pooled), "
            "L2-normalised",
            "dim": dim,
        },
        baseline=shift_baseline(
            Xa, [r.group for r in rows_a], classifier, rng=g_base, folds=folds, l2=l2
        )
        if baseline
        else None,
    )


def shift_check(
    path_a: str | Path, path_b: str | Path, *, seed: int = 0, **kwargs: Any
) -> ShiftReport:
    """Read two JSONL files and report how far B's tasks are from A's (see the module docstring).

    ``kwargs`` go to :func:`compare_rows` (``folds``, ``permutations``, ``max_mmd_rows``, ``dim``, ``l2``,
    ``baseline``).
    """
    rows_a, rows_b = read_rows(path_a), read_rows(path_b)
    return compare_rows(rows_a, rows_b, name_a=str(path_a), name_b=str(path_b), seed=seed, **kwargs)
