"""Turn episode records into ``summary.json`` metrics and a printed table, and say when a run failed.

Episodes that ended in an :class:`~agentenv.evaluation.agents.AgentFailure`
(``agent_failure`` in the record) are counted in ``agent_failures`` and
``agent_failure_rate``, with the most common reasons. A run where more than
half of the episodes failed that way is a failed run:
:func:`failed_run_message` says so and :func:`exit_code` is
:data:`FAILED_RUN_EXIT` for it (``agentenv eval`` returns it after writing
``summary.json`` and ``episodes.jsonl``, so the failures can be read).
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agentenv import __version__
from agentenv.evaluation.recorded_args import recorded_arg
from agentenv.evaluation.runner import RunConfig
from agentenv.evaluation.stats import bootstrap_ci
from agentenv.evaluation.summary import MAX_AGENT_FAILURE_RATE, Metric, Summary, failure_rate
from agentenv.terminal_text import terminal_text

FAILED_RUN_EXIT = 3
"""Exit status of ``agentenv eval`` for a failed run (2 is for bad input)."""
MAX_REASONS = 5
"""Failure reasons kept in ``summary.json``."""
REASON_CHARS = 200
"""A reason is shortened to this many characters (they carry URLs and server excerpts)."""


def summarize(
    config: RunConfig,
    records: Sequence[Mapping[str, Any]],
    wall_time_s: float,
    meta: Mapping[str, Any],
) -> Summary:
    """Aggregate metrics with 95% bootstrap intervals."""
    figures = row_figures(records, config.seed)
    env_version = int(config.env_id.rsplit("-v", 1)[-1]) if "-v" in config.env_id else 0
    # Timings: meta may split the wall time into build (env construction, first reset) and the loop.
    build_s = float(meta.get("build_s", 0.0))
    loop_s = float(meta.get("loop_s", wall_time_s - build_s))
    n_tasks = meta.get("n_tasks")
    tasks_file = meta.get("tasks_file")
    split = str(meta.get("split", config.split))
    if tasks_file is not None:
        split = "custom"
        tasks_file = {
            **tasks_file,
            "count": int(n_tasks if n_tasks is not None else tasks_file.get("count", 0)),
        }
    env_kwargs = {k: recorded_arg(k, v) for k, v in config.env_kwargs if k != "tasks"}
    return Summary(
        env_id=config.env_id,
        env_version=env_version,
        package_version=__version__,
        corpus_checksums=dict(meta.get("corpus_checksums", {})),
        agent=config.agent,
        agent_args={k: str(recorded_arg(k, v)) for k, v in config.agent_args},
        split=split,
        episodes=len(records),
        n_tasks=n_tasks,
        tasks_repeated=bool(n_tasks is not None and len(records) > n_tasks),
        tasks_file=tasks_file,
        import_warnings=list(meta.get("import_warnings", [])),
        skipped_task_rows=int(meta.get("skipped_task_rows", 0)),
        env_kwargs=env_kwargs,
        seed=config.seed,
        workers=config.workers,
        reward_preset=str(meta.get("reward_preset", "strict")),
        fingerprint=meta.get("fingerprint"),
        wall_time_s=wall_time_s,
        build_s=build_s,
        episodes_per_s=len(records) / loop_s if loop_s > 0 else 0.0,
        **figures,
    )


ROW_FIGURES = (
    "metrics",
    "intervals",
    "component_means",
    "per_kind_accuracy",
    "per_difficulty_accuracy",
    "agent_failures",
    "agent_failure_rate",
    "agent_failure_reasons",
)
"""The fields of ``summary.json`` that its episodes alone decide (with the run's seed, for the
bootstrap): the leaderboard recomputes them from the verified rows and refuses a summary that
differs."""


def row_figures(records: Sequence[Mapping[str, Any]], seed: int) -> dict[str, Any]:
    """The :data:`ROW_FIGURES` of a run's episode records: means with 95% bootstrap intervals (seeded
    with the run's seed, so the same rows give the same bytes), rates, per-kind and per-difficulty
    accuracy, and the agent failures with their most common reasons."""
    components = [r["reward_components"] for r in records]
    series = {
        "accuracy": [c.get("accuracy", 0.0) for c in components],
        "mean_reward": [r["reward"] for r in records],
        "mean_tool_calls": [r["tool_calls"] for r in records],
        "mean_turns": [r["turns"] for r in records],
    }
    intervals = {
        name: Metric(
            **dict(zip(("mean", "ci_low", "ci_high"), bootstrap_ci(v, seed=seed), strict=False))
        )
        for name, v in series.items()
    }
    turns = sum(r["turns"] for r in records)
    invalid = sum(c.get("invalid_actions", 0.0) for c in components)
    metrics = {name: m.mean for name, m in intervals.items()}
    metrics["invalid_action_rate"] = invalid / turns if turns else 0.0
    metrics["truncated_rate"] = (
        float(np.mean([r["truncated"] for r in records])) if records else 0.0
    )
    keys = sorted({k for c in components for k in c})
    component_means = {k: float(np.mean([c.get(k, 0.0) for c in components])) for k in keys}
    failures = [str(r["agent_failure"]) for r in records if r.get("agent_failure") is not None]
    metrics["agent_failure_rate"] = failure_rate(len(failures), len(records))
    reasons = Counter(_shorten(reason) for reason in failures).most_common(MAX_REASONS)
    return {
        "metrics": metrics,
        "intervals": intervals,
        "component_means": component_means,
        "per_kind_accuracy": _grouped(records, "kind"),
        "per_difficulty_accuracy": _grouped(records, "difficulty"),
        "agent_failures": len(failures),
        "agent_failure_rate": metrics["agent_failure_rate"],
        "agent_failure_reasons": dict(reasons),
    }


def _shorten(reason: str) -> str:
    """``reason`` on one line, cut to :data:`REASON_CHARS`. Control characters other than whitespace
    are kept, as the episodes hold them: the leaderboard recomputes these reasons from a run's rows
    and compares, so changing them here would call every earlier run that has one edited. They are
    escaped where a reason is printed (:func:`exit_code`, the leaderboard's refusal)."""
    reason = " ".join(reason.split())
    return reason if len(reason) <= REASON_CHARS else reason[: REASON_CHARS - 1] + "…"


def failed_run_message(summary: Summary) -> str | None:
    """Why the run counts as failed (most episodes ended in an agent failure), or None.

    Example:
        >>> from agentenv.evaluation.summary import Summary
        >>> s = Summary.model_construct(episodes=4, agent_failures=3, agent_failure_rate=0.75,
        ...                             agent_failure_reasons={"http://h/v1/chat/completions: connection refused": 3})
        >>> print(failed_run_message(s))
        3 of 4 episodes (75%) ended in an agent failure, more than the 50% a run may have; its scores measure the endpoint, not the policy. Most common: http://h/v1/chat/completions: connection refused (3). The leaderboard refuses this run unless given --keep-failed.
    """
    if not summary.failed:
        return None
    reasons = "; ".join(
        f"{reason} ({n})" for reason, n in list(summary.agent_failure_reasons.items())[:2]
    )
    return (
        f"{summary.agent_failures} of {summary.episodes} episodes ({summary.agent_failure_rate:.0%}) ended in an "
        f"agent failure, more than the {MAX_AGENT_FAILURE_RATE:.0%} a run may have; its scores measure the "
        f"endpoint, not the policy. Most common: {reasons or 'unknown'}. "
        "The leaderboard refuses this run unless given --keep-failed."
    )


def exit_code(summary: Summary, *, stream: Any = None) -> int:
    """The exit status of ``agentenv eval`` for a written run: 0, or :data:`FAILED_RUN_EXIT` with the reason printed.

    The reason goes to ``stream`` (default: stderr) as ``agentenv eval: failed run: ...``.
    """
    message = failed_run_message(summary)
    if message is None:
        return 0
    print(  # the reasons quote endpoints' replies: their control characters are shown, not obeyed
        terminal_text(f"agentenv eval: failed run: {message}"),
        file=stream if stream is not None else sys.stderr,
    )
    return FAILED_RUN_EXIT


def _grouped(records: Sequence[Mapping[str, Any]], key: str) -> dict[str, float]:
    groups: dict[str, list[float]] = defaultdict(list)
    for r in records:
        groups[str(r.get(key))].append(r["reward_components"].get("accuracy", 0.0))
    return {k: float(np.mean(v)) for k, v in sorted(groups.items())}


def format_table(summary: Summary) -> str:
    """A plain-text table for the terminal: names of the user's (the ``--tasks`` path, the agent,
    a task kind) pass through :func:`~agentenv.terminal_text.terminal_text`, so a path holding an
    ESC sequence or ``\\r`` is shown, not obeyed."""
    rows = [("metric", "mean", "95% CI")]
    for name, m in summary.intervals.items():
        rows.append((name, f"{m.mean:.4f}", f"[{m.ci_low:.4f}, {m.ci_high:.4f}]"))
    rows.append(("invalid_action_rate", f"{summary.metrics['invalid_action_rate']:.4f}", ""))
    if summary.agent_failures:
        rows.append(
            (
                "agent_failures",
                f"{summary.agent_failures}",
                f"{summary.agent_failure_rate:.1%} of episodes",
            )
        )
    rows.append(("build_s", f"{summary.build_s:.2f}", "env construction + first reset"))
    rows.append(("episodes/s", f"{summary.episodes_per_s:.1f}", "episode loop only"))
    for kind, acc in summary.per_kind_accuracy.items():
        rows.append((terminal_text(f"accuracy[{kind}]"), f"{acc:.4f}", ""))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    if summary.tasks_file is not None:
        source = f"custom tasks {summary.tasks_file.path}, {summary.tasks_file.count} tasks"
    else:
        source = f"{summary.split} split" + (
            f", {summary.n_tasks} tasks" if summary.n_tasks is not None else ""
        )
    head = f"{summary.agent} on {summary.env_id} ({source}, {summary.episodes} episodes, seed {summary.seed})"
    lines = [terminal_text(head)]
    if summary.tasks_repeated:
        lines.append(
            f"note: {summary.episodes} episodes over {summary.n_tasks} tasks: tasks repeat"
        )
    if summary.skipped_task_rows:
        lines.append(
            f"note: {summary.skipped_task_rows} bad row(s) of the task file skipped (--skip-bad-rows)"
        )
    if summary.import_warnings:
        lines.append(
            f"note: {len(summary.import_warnings)} import warning(s) in the task file "
            "(listed in summary.json's import_warnings)"
        )
    if summary.failed:
        lines.append(
            f"FAILED RUN: {summary.agent_failures} of {summary.episodes} episodes ended in an agent failure "
            "(see summary.json's agent_failure_reasons)"
        )
    lines += [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=False)).rstrip() for r in rows
    ]
    return "\n".join(lines)
