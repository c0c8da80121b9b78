"""How much a judge's verdicts move with its prompt, and how they agree with the rule grader, with bootstrap CIs.

The input is a verdict matrix: one row per (answer, gold) pair, one column per
paraphrased prompt, each cell ``True`` (yes), ``False`` (no) or ``None`` (a
reply that is not, as a whole, one allow-listed verdict word of its prompt's
pair: :func:`agentenv.judge.verdict_words.read_verdict`). Credit is
a yes; an unparseable verdict grants none, as it would in a reward. Reported:

* ``fleiss_kappa``: agreement across the prompts on credit (Fleiss 1971), and
  ``fleiss_kappa_3way`` over yes / no / unparseable;
* ``flip_rate``: the share of pairs whose credit changes with the prompt, and
  ``pairwise_flip_rate``: the share of pairs on which two prompts differ, for
  each pair of prompts and on average;
* per prompt: yes rate, unparseable share, accuracy and Cohen's kappa against
  the rule grader, and false positives on the attack answers;
* the majority verdict (a tie is no) against the rule grader;
* ``attack_false_positive``: the share of (attack answer, prompt) verdicts that
  credit an attack, and ``attack_any_prompt``: the share of attack answers that
  at least one prompt credits.

Each figure has a 95% percentile bootstrap interval over pairs (resampled
with a seeded numpy ``Generator``); an undefined kappa (every verdict alike) is
``nan`` and left out of its interval.

Example (5 pairs, 3 prompts; hand-computed in the tests):
    >>> v = [[True, True, True], [False, False, False], [True, False, None],
    ...      [False, False, True], [None, None, None]]
    >>> s = prompt_statistics(v, [True, False, True, False, False], [False] * 5)
    >>> round(s["fleiss_kappa"], 4), s["flip_rate"], round(s["pairwise_flip_rate"], 4)
    (0.4, 0.4, 0.2667)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np

__all__ = ["bootstrap", "fleiss_from_counts", "prompt_statistics"]

Verdict = bool | None


def fleiss_from_counts(counts: np.ndarray) -> float:
    """Fleiss' kappa from ``counts[item, category]`` (every row sums to the same number of raters >= 2)."""
    counts = np.asarray(counts, dtype=float)
    n = counts[0].sum()
    p_i = ((counts * counts).sum(axis=1) - n) / (n * (n - 1))
    p_j = counts.sum(axis=0) / counts.sum()
    p_e = float((p_j * p_j).sum())
    if math.isclose(p_e, 1.0):
        return math.nan
    return float((p_i.mean() - p_e) / (1.0 - p_e))


def _cohen(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's kappa of two boolean arrays."""
    po = float((a == b).mean())
    pa, pb = float(a.mean()), float(b.mean())
    pe = pa * pb + (1 - pa) * (1 - pb)
    return math.nan if math.isclose(pe, 1.0) else (po - pe) / (1 - pe)


def _rate(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else math.nan


def prompt_statistics(
    verdicts: Sequence[Sequence[Verdict]],
    rule_correct: Sequence[bool],
    is_attack: Sequence[bool],
    names: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The figures of the module docstring for one verdict matrix (no intervals)."""
    grid = np.array([[{True: 1, False: 0, None: 2}[v] for v in row] for row in verdicts])
    if grid.ndim != 2 or grid.shape[1] < 2:
        raise ValueError("verdicts needs one row per pair and at least 2 prompts in every row")
    names = list(names) if names is not None else [f"prompt_{i}" for i in range(grid.shape[1])]
    rules = np.asarray(rule_correct, dtype=bool)
    attack = np.asarray(is_attack, dtype=bool)
    credit = grid == 1
    k = grid.shape[1]
    counts3 = np.stack([(grid == c).sum(axis=1) for c in (0, 1, 2)], axis=1)
    counts2 = np.stack([(~credit).sum(axis=1), credit.sum(axis=1)], axis=1)
    pairwise = {
        f"{names[a]}|{names[b]}": float((credit[:, a] != credit[:, b]).mean())
        for a, b in combinations(range(k), 2)
    }
    majority = credit.sum(axis=1) * 2 > k
    per_prompt = {
        name: {
            "yes_rate": float(credit[:, j].mean()),
            "unparseable": float((grid[:, j] == 2).mean()),
            "rule_accuracy": float((credit[:, j] == rules).mean()),
            "rule_kappa": _cohen(credit[:, j], rules),
            "attack_false_positive": _rate(credit[attack, j]),
        }
        for j, name in enumerate(names)
    }
    return {
        "fleiss_kappa": fleiss_from_counts(counts2),
        "fleiss_kappa_3way": fleiss_from_counts(counts3),
        "flip_rate": float((credit.any(axis=1) & ~credit.all(axis=1)).mean()),
        "pairwise_flip_rate": float(np.mean(list(pairwise.values()))),
        "pairwise_flips": pairwise,
        "unparseable": float((grid == 2).mean()),
        "majority_rule_accuracy": float((majority == rules).mean()),
        "majority_rule_kappa": _cohen(majority, rules),
        "attack_false_positive": _rate(credit[attack].ravel()),
        "attack_any_prompt": _rate(credit[attack].any(axis=1)),
        "per_prompt": per_prompt,
    }


def bootstrap(
    verdicts: Sequence[Sequence[Verdict]],
    rule_correct: Sequence[bool],
    is_attack: Sequence[bool],
    names: Sequence[str],
    *,
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """:func:`prompt_statistics` with a 95% percentile interval on every number: ``{"value": x, "ci": [lo, hi]}``.

    Resampling is stratified by attack / not attack, so every resample holds attack answers.
    """
    point = prompt_statistics(verdicts, rule_correct, is_attack, names)
    rng = np.random.default_rng(seed)
    attack = np.asarray(is_attack, dtype=bool)
    strata = [np.flatnonzero(attack), np.flatnonzero(~attack)]
    rows = list(verdicts)
    draws: list[dict[str, Any]] = []
    for _ in range(resamples):
        idx = np.concatenate([rng.choice(s, size=s.size) for s in strata if s.size])
        draws.append(
            prompt_statistics(
                [rows[i] for i in idx],
                [rule_correct[i] for i in idx],
                [is_attack[i] for i in idx],
                names,
            )
        )
    return _with_ci(point, draws)


def _with_ci(point: Any, draws: list[Any]) -> Any:
    if isinstance(point, dict):
        return {key: _with_ci(value, [d[key] for d in draws]) for key, value in point.items()}
    values = np.array([d for d in draws if not math.isnan(d)], dtype=float)
    ci = (
        [float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))]
        if values.size
        else [math.nan, math.nan]
    )
    return {"value": point, "ci": ci}
