"""The ranges a run's numbers must lie in, checked where a record or a summary is read back.

Why: a resumed run folds its finished records into a new summary, and a
leaderboard prints a summary's numbers as they are. A reward of NaN, an
accuracy of 5.0 or a negative tool-call count is no measurement of anything,
so it is refused where it is read, naming the file, the line and the field,
instead of being averaged into a board.

The ranges follow :mod:`agentenv.rewards.components`: shares and hits lie in
``[0, 1]``, counts and latencies are never negative, and every number is
finite. A component this table does not know (a family's own, a wrapper's
cost) need only be finite.

Example:
    >>> check_record({"episode": 0, "reward": 1.0, "turns": 2, "tool_calls": 1,
    ...               "terminated": True, "truncated": False,
    ...               "reward_components": {"accuracy": 1.0, "hit@3": 1.0}}, "episodes.jsonl line 1")
    >>> check_record({"episode": 0, "reward": float("nan"), "turns": 2, "tool_calls": 1,
    ...               "terminated": True, "truncated": False, "reward_components": {}}, "x line 1")
    Traceback (most recent call last):
    ...
    agentenv.evaluation.run_files.RunFileError: x line 1: reward is nan; a reward must be a finite number
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from agentenv.evaluation.run_files import RunFileError

__all__ = ["UNIT_COMPONENTS", "check_record", "check_summary", "component_range"]

UNIT_COMPONENTS = frozenset(
    {
        "accuracy",
        "format",
        "hit@any",
        "reciprocal_rank",
        "over_limit",
        "first_call",
        "faithful",
        "truthfulness",
    }
)
"""Components that are shares or 0/1 flags: in ``[0, 1]``."""
COUNT_COMPONENTS = frozenset(
    {
        "tool_calls",
        "turns",
        "invalid_actions",
        "tool_errors",
        "latency_ms",
        "tokens",
        "n_predictions",
        "messages",
        "claims",
        "false_claims",
        "evasions",
        "unanswered",
        "leaks",
        "volunteered",
        "contradictions",
        "questions_asked",
        "held_back",
        "revealed",
        "unresolved",
    }
)
"""Components that count something (or add up latencies): never negative."""
_HIT = re.compile(r"hit@\d+")
_UNIT_METRICS = frozenset(
    {"accuracy", "invalid_action_rate", "truncated_rate", "agent_failure_rate"}
)
_COUNT_METRICS = frozenset({"mean_tool_calls", "mean_turns"})


def component_range(name: str) -> tuple[float, float]:
    """The closed range a component's value must lie in (a share in [0, 1], a count at least 0, any
    other within :data:`MAX_ABS_VALUE` of 0)."""
    if name in UNIT_COMPONENTS or _HIT.fullmatch(name):
        return 0.0, 1.0
    if name in COUNT_COMPONENTS:
        return 0.0, MAX_ABS_VALUE
    return -MAX_ABS_VALUE, MAX_ABS_VALUE


def _number(value: Any, where: str, name: str, low: float, high: float, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RunFileError(f"{where}: {name} is {value!r}; {what} must be a number")
    if not math.isfinite(value):
        raise RunFileError(f"{where}: {name} is {value}; {what} must be a finite number")
    if not low <= value <= high:
        span = f"[{low:g}, {high:g}]" if math.isfinite(high) else f"at least {low:g}"
        raise RunFileError(f"{where}: {name} is {value}; {what} must be {span}")


MAX_ABS_VALUE = 1e12
"""The largest reward or component magnitude a record may hold: any preset's sum stays far below it,
and a mean of such values cannot overflow (rewards of 1e308 made the mean an OverflowError)."""
MAX_COUNT = 10**9
"""The largest turn or tool-call count a record may hold: far past any episode, and small enough that
means over them stay exact floats (10**400 made the mean an OverflowError)."""


def _count(value: Any, where: str, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        shown = (
            repr(value)
            if len(repr(value)) <= 40
            else f"{repr(value)[:20]}... ({type(value).__name__})"
        )
        raise RunFileError(
            f"{where}: {name} is {shown}; it must be a whole number from 0 to {MAX_COUNT:,}"
        )


def check_record(record: Mapping[str, Any], where: str) -> None:
    """Refuse an ``episodes.jsonl`` record whose numbers are out of range or of the wrong type.

    Raises:
        RunFileError: naming ``where`` (``file line N``) and the field.
    """
    _number(record.get("reward"), where, "reward", -MAX_ABS_VALUE, MAX_ABS_VALUE, "a reward")
    _count(record.get("turns"), where, "turns")
    _count(record.get("tool_calls"), where, "tool_calls")
    for flag in ("terminated", "truncated"):
        if not isinstance(record.get(flag), bool):
            raise RunFileError(f"{where}: {flag} is {record.get(flag)!r}; it must be true or false")
    components = record.get("reward_components")
    if not isinstance(components, Mapping):
        raise RunFileError(
            f"{where}: reward_components is {type(components).__name__}; it must be an object"
        )
    for name, value in components.items():
        low, high = component_range(str(name))
        _number(value, where, f"reward_components.{name}", low, high, f"component {name!r}")


def check_summary(summary: Any, where: str) -> None:
    """Refuse a :class:`~agentenv.evaluation.summary.Summary` whose figures are out of range.

    Checks the metrics, their intervals (``ci_low <= mean <= ci_high``), the component means and the
    per-kind and per-difficulty accuracies.

    Raises:
        RunFileError: naming ``where`` (the file) and the field.
    """
    for name, value in summary.metrics.items():
        low, high = (
            (0.0, 1.0)
            if name in _UNIT_METRICS
            else (0.0, math.inf)
            if name in _COUNT_METRICS
            else (-math.inf, math.inf)
        )
        _number(value, where, f"metrics.{name}", low, high, name)
    for name, metric in summary.intervals.items():
        for part in ("mean", "ci_low", "ci_high"):
            _number(
                getattr(metric, part), where, f"intervals.{name}.{part}", -math.inf, math.inf, part
            )
        slack = 1e-9 * max(1.0, abs(metric.mean))  # float rounding of a resampled mean
        if not metric.ci_low - slack <= metric.mean <= metric.ci_high + slack:
            raise RunFileError(
                f"{where}: intervals.{name} has mean {metric.mean} outside [{metric.ci_low}, "
                f"{metric.ci_high}]; an interval must contain its mean"
            )
        if name in summary.metrics and summary.metrics[name] != metric.mean:
            raise RunFileError(
                f"{where}: metrics.{name} is {summary.metrics[name]} but intervals.{name}.mean is "
                f"{metric.mean}; they must agree"
            )
    for name, value in summary.component_means.items():
        low, high = component_range(name)
        _number(value, where, f"component_means.{name}", low, high, f"component {name!r}")
    for block in ("per_kind_accuracy", "per_difficulty_accuracy"):
        for key, value in getattr(summary, block).items():
            _number(value, where, f"{block}.{key}", 0.0, 1.0, "an accuracy")
    if summary.episodes < 0:
        raise RunFileError(f"{where}: episodes is {summary.episodes}; it must be at least 0")
    _count(summary.agent_failures, where, "agent_failures")
    _number(summary.agent_failure_rate, where, "agent_failure_rate", 0.0, 1.0, "a rate")
