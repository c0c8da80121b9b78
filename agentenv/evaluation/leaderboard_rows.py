"""What a leaderboard is made of: its entries, their labels and the cells of their rows.

Why a module of its own: the board's three renderings (the Markdown tables
in :mod:`~agentenv.evaluation.leaderboard`, the HTML page in
:mod:`~agentenv.evaluation.leaderboard_html`, the plots in
:mod:`~agentenv.evaluation.leaderboard_plots`) share these pieces. Kept
below all three, it lets :mod:`~agentenv.evaluation.leaderboard` import the
renderers without any of them importing it back (no import cycle).

Example:
    >>> agent_label("llm", {"model": "Qwen/Qwen3-8B", "api_key": "sk-secret", "temperature": "0"})
    'llm (model=Qwen/Qwen3-8B, temperature=0)'
    >>> difficulty_order(["hard", "easy", "unknown", "medium"])
    ['easy', 'medium', 'hard', 'unknown']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentenv.evaluation.summary import Summary

__all__ = [
    "COLUMNS",
    "DIFFICULTY_ORDER",
    "PLOT_FILES",
    "SECRET_ARGS",
    "Entry",
    "agent_label",
    "difficulty_order",
    "env_caption",
    "row_cells",
]

SECRET_ARGS = ("api_key", "token", "password", "secret")
"""``--agent-args`` whose names contain one of these never appear on a board."""
DIFFICULTY_ORDER = ("easy", "medium", "hard")
PLOT_FILES = ("accuracy_vs_tool_calls.png", "accuracy_by_difficulty.png")


@dataclass(frozen=True)
class Entry:
    """One run on the board: its summary, where it came from, and its row label."""

    summary: Summary
    source: Path
    label: str
    verified: bool = True
    """Its rows were checked against their digests; False: written without digests (shown, marked)."""


def agent_label(agent: str, args: Mapping[str, str]) -> str:
    """The row label: the agent name and its arguments, secrets left out."""
    shown = [
        f"{k}={v}" for k, v in sorted(args.items()) if not any(s in k.lower() for s in SECRET_ARGS)
    ]
    return f"{agent} ({', '.join(shown)})" if shown else agent


def difficulty_order(levels: Iterable[str]) -> list[str]:
    """Difficulty levels easy → hard first, any others after them in name order."""
    levels = set(levels)
    known = [d for d in DIFFICULTY_ORDER if d in levels]
    return known + sorted(levels - set(known))


COLUMNS = (
    "agent",
    "accuracy (95% CI)",
    "mean reward",
    "mean tool calls",
    "mean turns",
    "invalid-action rate",
    "episodes",
)


def row_cells(summary: Summary, label: str, verified: bool = True) -> list[str]:
    """The formatted cells of one row, in :data:`COLUMNS` order; an unverified run's episodes cell says so."""
    acc = summary.intervals.get("accuracy")
    m = summary.metrics
    accuracy = (
        f"{acc.mean:.3f} [{acc.ci_low:.3f}, {acc.ci_high:.3f}]"
        if acc
        else f"{m.get('accuracy', 0.0):.3f}"
    )
    return [
        label,
        accuracy,
        f"{m.get('mean_reward', 0.0):.3f}",
        f"{m.get('mean_tool_calls', 0.0):.2f}",
        f"{m.get('mean_turns', 0.0):.2f}",
        f"{m.get('invalid_action_rate', 0.0):.3f}",
        _episodes(summary) + ("" if verified else " (unverified)"),
    ]


def _episodes(summary: Summary) -> str:
    """The episodes cell: the count, and how many ended in an agent failure when any did."""
    if not summary.agent_failures:
        return str(summary.episodes)
    return f"{summary.episodes} ({summary.agent_failures} agent failures)"


def env_caption(group: Sequence[Entry]) -> str:
    """What every row of an env's table shares: split, version, corpora, reward presets."""
    s = group[0].summary
    corpora = (
        ", ".join(f"{k} `{v[:12]}`" for k, v in sorted(s.corpus_checksums.items()))
        or "none recorded"
    )
    presets = ", ".join(sorted({e.summary.reward_preset for e in group}))
    split = f"split `{s.split}`"
    if s.tasks_file is not None:
        split = f"custom tasks `{s.tasks_file.path}` ({s.tasks_file.count} tasks, sha256 `{s.tasks_file.sha256[:12]}`)"
    caption = f"{split}, env version {s.env_version}, corpus {corpora}, reward preset {presets}"
    if s.fingerprint:
        caption += ", fingerprint " + " ".join(
            f"{part} `{value if part == 'grader' else value[:12]}`"
            for part, value in s.fingerprint.items()
        )
    unverified = sum(not e.verified for e in group)
    if unverified:
        caption += (
            f"; {unverified} of {len(group)} runs unverified (written without row digests: "
            "re-run them to verify)"
        )
    return caption
