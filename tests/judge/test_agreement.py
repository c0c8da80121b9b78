"""Fleiss' and Cohen's kappa against published and hand-computed values."""

from __future__ import annotations

import math

import pytest

from agentenv.judge.agreement import cohen_kappa, fleiss_kappa

# Counts n_ij (10 subjects, 14 raters, 5 categories) of the worked example used to teach
# Fleiss' kappa; kappa = 0.210 (P = 0.378, P_e = 0.213).
WORKED = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_worked_example() -> None:
    ratings = [[j for j, count in enumerate(row) for _ in range(count)] for row in WORKED]
    assert fleiss_kappa(ratings) == pytest.approx(0.2099307, abs=1e-6)


def test_fleiss_extremes() -> None:
    assert fleiss_kappa([[True] * 5, [False] * 5, [True] * 5]) == 1.0
    assert fleiss_kappa([[True, False]] * 4) == -1.0, "two raters who always disagree"
    assert math.isnan(fleiss_kappa([[True] * 3] * 4)), "one category only: undefined"
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([[True, False], [True]])
    with pytest.raises(ValueError, match="at least one item"):
        fleiss_kappa([])


# Worked by hand (and equal to scikit-learn's cohen_kappa_score): kappa = (p_o - p_e) / (1 - p_e).
@pytest.mark.parametrize(
    ("a", "b", "kappa"),
    [
        ([1, 0, 1, 1, 0, 1, 0, 0, 1, 1], [1, 0, 0, 1, 0, 1, 1, 0, 1, 1], 7 / 12),  # p_o .8, p_e .52
        (
            [True, True, False, False, True],
            [True, False, False, True, True],
            1 / 6,
        ),  # p_o .6, p_e .52
        (["x", "y", "z", "x", "y", "z"], ["x", "y", "y", "x", "z", "z"], 0.5),  # p_o 2/3, p_e 1/3
    ],
)
def test_cohen_worked_examples(a: list, b: list, kappa: float) -> None:
    assert cohen_kappa(a, b) == pytest.approx(kappa)


def test_cohen_edge_cases() -> None:
    assert math.isnan(cohen_kappa([True, True], [True, True]))
    with pytest.raises(ValueError, match="equally long"):
        cohen_kappa([True], [True, False])
