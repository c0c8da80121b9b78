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

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import optimize, sparse, special, stats

from agentenv.data.text_embedding import HashedNgramEmbedder
from agentenv.errors import UserInputError

__all__ = [
    "CategoryShift",
    "ClassifierTest",
    "MMDTest",
    "ShiftReport",
    "TaskRow",
    "auc_delong",
    "category_shift",
    "classifier_test",
    "compare_rows",
    "fit_logistic",
    "mmd_test",
    "read_rows",
    "shift_check",
]

TEXT_KEYS = ("prompt", "question", "query", "instruction", "text", "input")
"""Keys whose string value is a task row's text, tried in this order."""

NESTED_KEYS = ("task", "metadata", "public")
"""Dicts inside a row searched (after the row itself) for the text, ``kind`` and ``difficulty``."""

_EXPECTED = (
    "one JSON object per line: a task row with a text field ("
    + ", ".join(repr(k) for k in TEXT_KEYS)
    + "; optionally 'kind' and 'difficulty'), or an SFT chat row {\"messages\": [...]} "
    "with a user message"
)


@dataclass(frozen=True)
class TaskRow:
    """One row's text and, when the row has them, its kind and difficulty."""

    text: str
    kind: str | None = None
    difficulty: str | None = None


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
    return TaskRow(text=text, kind=_label(scopes, "kind"), difficulty=_label(scopes, "difficulty"))


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
    rows = []
    try:
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                where = f"{path}:{lineno}"
                try:
                    data = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise UserInputError(
                        f"{where}: not valid JSON ({exc.msg} at column {exc.colno}); "
                        f"expected {_EXPECTED}"
                    ) from None
                rows.append(row_from_dict(data, where))
    except UnicodeDecodeError as exc:
        raise UserInputError(
            f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); "
            f"expected a JSONL file, {_EXPECTED}"
        ) from None
    if not rows:
        raise UserInputError(f"{path}: no rows (the file is empty); expected {_EXPECTED}")
    return rows


# --------------------------------------------------------------------------- histograms


@dataclass
class CategoryShift:
    """Histograms of one categorical field (``kind`` or ``difficulty``) in A and B, and their distance.

    ``available`` is false (with ``reason``) when a file has no row with the
    field; rows of a file that has it elsewhere count under ``"(none)"``.
    """

    field: str
    available: bool
    counts_a: dict[str, int] = field(default_factory=dict)
    counts_b: dict[str, int] = field(default_factory=dict)
    js_divergence: float | None = None
    total_variation: float | None = None
    reason: str = ""


def js_divergence(p: np.ndarray, q: np.ndarray) -> float:
    """Jensen-Shannon divergence in bits (base 2, in [0, 1]) of two histograms (normalised here).

    Example:
        >>> js_divergence(np.array([1, 0]), np.array([0, 1])), js_divergence(np.array([1, 1]), np.array([2, 2]))
        (1.0, 0.0)
    """
    p = np.asarray(p, dtype=np.float64) / np.sum(p)
    q = np.asarray(q, dtype=np.float64) / np.sum(q)
    m = 0.5 * (p + q)

    def kl(a: np.ndarray) -> float:
        nz = a > 0
        return float(np.sum(a[nz] * np.log2(a[nz] / m[nz])))

    return float(min(1.0, max(0.0, 0.5 * kl(p) + 0.5 * kl(q))))


def category_shift(
    name: str,
    a: Sequence[str | None],
    b: Sequence[str | None],
    name_a: str = "A",
    name_b: str = "B",
) -> CategoryShift:
    """Compare the values of field ``name`` in A and B (``None``: the row lacks it)."""
    missing = [n for n, vals in ((name_a, a), (name_b, b)) if all(v is None for v in vals)]
    if missing:
        return CategoryShift(
            field=name,
            available=False,
            reason=" and ".join(missing) + f" {'have' if len(missing) > 1 else 'has'} "
            f"no {name!r} field",
        )
    ca = Counter("(none)" if v is None else v for v in a)
    cb = Counter("(none)" if v is None else v for v in b)
    cats = sorted(set(ca) | set(cb))
    p = np.array([ca[c] for c in cats], dtype=np.float64)
    q = np.array([cb[c] for c in cats], dtype=np.float64)
    tv = 0.5 * float(np.sum(np.abs(p / p.sum() - q / q.sum())))
    return CategoryShift(
        field=name,
        available=True,
        counts_a={c: ca[c] for c in cats},
        counts_b={c: cb[c] for c in cats},
        js_divergence=js_divergence(p, q),
        total_variation=tv,
    )


# --------------------------------------------------------------------------- classifier test


def fit_logistic(
    X: sparse.spmatrix | np.ndarray, y: np.ndarray, *, l2: float = 1.0, max_iter: int = 500
) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression: weights and intercept minimising
    ``sum(log(1 + exp(-s * (X w + b)))) + l2 / 2 * ||w||^2`` with ``s = 2y - 1`` (L-BFGS; intercept unpenalised).

    ``l2=1`` is scikit-learn's default ``C=1``.

    Example:
        >>> X = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
        >>> w, b = fit_logistic(X, np.array([1, 1, 0, 0]))
        >>> bool(w[0] > 0 > w[1])
        True
    """
    s = 2.0 * np.asarray(y, dtype=np.float64) - 1.0
    d = X.shape[1]

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[:d], theta[d]
        z = X @ w + b
        margin = s * z
        loss = float(np.sum(np.logaddexp(0.0, -margin))) + 0.5 * l2 * float(w @ w)
        r = -s * special.expit(-margin)
        grad = np.empty(d + 1)
        grad[:d] = X.T @ r + l2 * w
        grad[d] = r.sum()
        return loss, grad

    res = optimize.minimize(
        objective, np.zeros(d + 1), jac=True, method="L-BFGS-B", options={"maxiter": max_iter}
    )
    return res.x[:d], float(res.x[d])


def auc_delong(scores: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """AUC of ``scores`` for ``labels`` (1 positive) and its DeLong standard error (ties count one half).

    Example:
        >>> auc_delong(np.array([0.9, 0.8, 0.3, 0.1]), np.array([1, 1, 0, 0]))[0]
        1.0
    """
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels).astype(bool)
    x, yv = scores[labels], scores[~labels]
    m, n = len(x), len(yv)
    tz = stats.rankdata(np.concatenate([x, yv]))
    tx, ty = stats.rankdata(x), stats.rankdata(yv)
    auc = (tz[:m].sum() - m * (m + 1) / 2) / (m * n)
    v10 = (tz[:m] - tx) / n
    v01 = 1.0 - (tz[m:] - ty) / m
    var = (np.var(v10, ddof=1) / m if m > 1 else 0.0) + (np.var(v01, ddof=1) / n if n > 1 else 0.0)
    return float(auc), float(math.sqrt(max(var, 0.0)))


@dataclass
class ClassifierTest:
    """The cross-fitted classifier two-sample test: out-of-fold AUC, its 95% CI and what it means."""

    auc: float
    ci_low: float
    ci_high: float
    p_value: float
    n_per_side: int
    folds: int
    ci_method: str = "DeLong"
    interpretation: str = ""


def interpret_auc(auc: float, ci_low: float) -> str:
    """One line on what an out-of-fold AUC and the low end of its CI say."""
    if ci_low <= 0.5:
        return "indistinguishable: the classifier does no better than chance (CI contains 0.5); no detectable shift"
    if auc < 0.6:
        return "a slight but detectable shift: texts differ a little (CI excludes 0.5)"
    if auc < 0.75:
        return "a moderate shift: a text classifier tells A from B fairly often"
    if auc < 0.9:
        return "a large shift: A and B are mostly distinguishable from their texts"
    return "a severe shift: A and B are almost perfectly distinguishable from their texts"


def _stratified_folds(labels: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    fold = np.empty(len(labels), dtype=np.int64)
    for cls in (0, 1):
        idx = np.flatnonzero(labels == cls)
        idx = idx[rng.permutation(len(idx))]
        for f, part in enumerate(np.array_split(idx, k)):
            fold[part] = f
    return fold


def classifier_test(
    Xa: sparse.spmatrix,
    Xb: sparse.spmatrix,
    *,
    rng: np.random.Generator,
    folds: int = 5,
    l2: float = 1.0,
) -> ClassifierTest:
    """Balance A and B by subsampling the larger, cross-fit a logistic regression, score every row out of fold."""
    n = min(Xa.shape[0], Xb.shape[0])
    if n < max(folds, 5):
        raise UserInputError(
            f"the classifier test needs at least {max(folds, 5)} rows per file, "
            f"got {Xa.shape[0]} and {Xb.shape[0]}"
        )
    ia = np.sort(rng.choice(Xa.shape[0], size=n, replace=False))
    ib = np.sort(rng.choice(Xb.shape[0], size=n, replace=False))
    X = sparse.vstack([Xa[ia], Xb[ib]]).tocsr()
    y = np.concatenate([np.ones(n, dtype=np.int64), np.zeros(n, dtype=np.int64)])
    fold = _stratified_folds(y, folds, rng)
    oof = np.empty(2 * n)
    for f in range(folds):
        train, test = fold != f, fold == f
        w, b = fit_logistic(X[train], y[train], l2=l2)
        oof[test] = X[test] @ w + b
    auc, se = auc_delong(oof, y)
    lo, hi = max(0.0, auc - 1.959964 * se), min(1.0, auc + 1.959964 * se)
    p = float(stats.norm.sf((auc - 0.5) / se)) if se > 0 else (0.0 if auc > 0.5 else 1.0)
    return ClassifierTest(
        auc=auc,
        ci_low=lo,
        ci_high=hi,
        p_value=p,
        n_per_side=n,
        folds=folds,
        interpretation=interpret_auc(auc, lo),
    )


# --------------------------------------------------------------------------- MMD


@dataclass
class MMDTest:
    """Unbiased MMD² (RBF kernel, median-heuristic bandwidth) with its permutation p-value."""

    mmd2: float
    p_value: float
    permutations: int
    bandwidth: float
    n_a: int
    n_b: int


def mmd_test(
    Xa: sparse.spmatrix | np.ndarray,
    Xb: sparse.spmatrix | np.ndarray,
    *,
    rng: np.random.Generator,
    permutations: int = 200,
    max_rows: int = 1000,
) -> MMDTest:
    """Unbiased MMD² of A and B and the share of label permutations with an MMD² at least as large.

    The bandwidth ``sigma`` is the median pairwise distance of the pooled rows
    and ``k(x, y) = exp(-||x - y||^2 / (2 sigma^2))``; each side is first
    subsampled (seeded) to at most ``max_rows``. The p-value is
    ``(1 + #{permuted >= observed}) / (1 + permutations)``.
    """
    ia = rng.choice(Xa.shape[0], size=min(max_rows, Xa.shape[0]), replace=False)
    ib = rng.choice(Xb.shape[0], size=min(max_rows, Xb.shape[0]), replace=False)
    m, n = len(ia), len(ib)
    if m < 2 or n < 2:
        raise UserInputError(
            f"MMD needs at least 2 rows per file, got {Xa.shape[0]} and {Xb.shape[0]}"
        )
    Z = sparse.vstack(
        [sparse.csr_matrix(Xa)[np.sort(ia)], sparse.csr_matrix(Xb)[np.sort(ib)]]
    ).tocsr()
    G = (Z @ Z.T).toarray()
    sq = np.diag(G).copy()
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * G, 0.0)
    med = float(np.median(d2[np.triu_indices_from(d2, k=1)]))
    if med <= 0:
        med = float(np.mean(d2)) or 1.0
    K = np.exp(-d2 / (2.0 * med))
    N = m + n
    rowsum = K.sum(axis=1)
    total = float(rowsum.sum())
    trace = float(np.trace(K))

    def mmd2(A: np.ndarray) -> np.ndarray:
        """MMD² for each column of ``A`` (an N x P 0/1 matrix marking the rows taken as A)."""
        kdiag = np.diag(K)
        aKa = np.einsum("ip,ip->p", A, K @ A)
        aK1 = A.T @ rowsum
        a_diag = A.T @ kdiag
        bKb = total - 2.0 * aK1 + aKa
        aKb = aK1 - aKa
        sxx = (aKa - a_diag) / (m * (m - 1))
        syy = (bKb - (trace - a_diag)) / (n * (n - 1))
        return sxx + syy - 2.0 * aKb / (m * n)

    observed_a = np.zeros((N, 1))
    observed_a[:m, 0] = 1.0
    observed = float(mmd2(observed_a)[0])
    perm = np.zeros((N, permutations))
    for p in range(permutations):
        perm[rng.permutation(N)[:m], p] = 1.0
    null = mmd2(perm) if permutations else np.zeros(0)
    p_value = float((1 + np.sum(null >= observed)) / (1 + permutations))
    return MMDTest(
        mmd2=observed,
        p_value=p_value,
        permutations=permutations,
        bandwidth=math.sqrt(med),
        n_a=m,
        n_b=n,
    )


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

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every figure."""
        return asdict(self)

    def format(self) -> str:
        """The report as text, one section per test."""
        lines = [
            f"shift-check  seed {self.seed}",
            f"  A: {self.name_a} ({self.n_a} rows)",
            f"  B: {self.name_b} ({self.n_b} rows)",
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
            f"  MMD^2 {mm.mmd2:.4f}  permutation p {mm.p_value:.3f} ({mm.permutations} permutations)",
            f"  -> {'the embedding distributions differ' if mm.p_value < 0.05 else 'no significant difference'}"
            " at the 5% level",
        ]
        return "\n".join(lines)


def _format_category(shift: CategoryShift) -> list[str]:
    if not shift.available:
        return [f"{shift.field}: not available ({shift.reason})"]
    na, nb = sum(shift.counts_a.values()), sum(shift.counts_b.values())
    width = max(12, *(len(c) for c in shift.counts_a))
    out = [f"{shift.field + ':':{width + 2}s} {'A':>14s} {'B':>14s}"]
    for cat in shift.counts_a:
        a, b = shift.counts_a[cat], shift.counts_b[cat]
        out.append(f"  {cat:{width}s} {a:6d} ({100 * a / na:5.1f}%) {b:6d} ({100 * b / nb:5.1f}%)")
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
) -> ShiftReport:
    """The shift report of two in-memory row lists (what :func:`shift_check` runs on the files' rows)."""
    g_clf, g_mmd = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    embedder = HashedNgramEmbedder(dim=dim)
    texts = [r.text for r in rows_a] + [r.text for r in rows_b]
    X = embedder.fit_transform(texts)
    Xa, Xb = X[: len(rows_a)], X[len(rows_a) :]
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
        classifier=classifier_test(Xa, Xb, rng=g_clf, folds=folds, l2=l2),
        mmd=mmd_test(Xa, Xb, rng=g_mmd, permutations=permutations, max_rows=max_mmd_rows),
        embedding={
            "kind": "hashed char 3-5 grams + word unigrams, sublinear TF x IDF (fitted on A and B pooled), "
            "L2-normalised",
            "dim": dim,
        },
    )


def shift_check(
    path_a: str | Path, path_b: str | Path, *, seed: int = 0, **kwargs: Any
) -> ShiftReport:
    """Read two JSONL files and report how far B's tasks are from A's (see the module docstring).

    ``kwargs`` go to :func:`compare_rows` (``folds``, ``permutations``, ``max_mmd_rows``, ``dim``, ``l2``).
    """
    rows_a, rows_b = read_rows(path_a), read_rows(path_b)
    return compare_rows(rows_a, rows_b, name_a=str(path_a), name_b=str(path_b), seed=seed, **kwargs)
