"""The two-sample statistics behind ``agentenv data shift-check``: histograms (JS divergence),
a cross-fitted classifier test (AUC with DeLong's CI) and MMD² with a permutation p-value.

Why a module of its own: these are pure functions of arrays and seeded
generators, independent of how rows are read or how the report is printed.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, sparse, special, stats

from agentenv.errors import UserInputError

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
