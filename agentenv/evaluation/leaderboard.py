"""The leaderboard: many ``summary.json`` files in, one comparison out (Markdown, HTML, PNG).

Why it refuses instead of warning: two numbers on one board must be
comparable. Results of one env id are compared only when they were run on
the same corpus (checksums), the same env version and the same split; a
mismatch is an error naming both files and both values, since a silently
mixed board is worse than none.

Each row is one run: the agent (with its ``--agent-args``, secrets left out),
accuracy with its 95% bootstrap interval, mean reward, mean tool calls and
turns, invalid-action rate and the number of episodes. Rows are sorted by
accuracy. :func:`write_leaderboard` writes ``leaderboard.md``,
``leaderboard.html`` (self-contained, sortable) and, with matplotlib (the
``leaderboard`` extra), ``accuracy_vs_tool_calls.png`` and
``accuracy_by_difficulty.png``.

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

from pydantic import ValidationError

from agentenv.evaluation.summary import Summary

SECRET_ARGS = ("api_key", "token", "password", "secret")
"""``--agent-args`` whose names contain one of these never appear on a board."""
DIFFICULTY_ORDER = ("easy", "medium", "hard")
PLOT_FILES = ("accuracy_vs_tool_calls.png", "accuracy_by_difficulty.png")


class LeaderboardError(ValueError):
    """Results that cannot share a board (or cannot be read); the message says which and why."""


@dataclass(frozen=True)
class Entry:
    """One run on the board: its summary, where it came from, and its row label."""

    summary: Summary
    source: Path
    label: str


def agent_label(agent: str, args: Mapping[str, str]) -> str:
    """The row label: the agent name and its arguments, secrets left out."""
    shown = [f"{k}={v}" for k, v in sorted(args.items()) if not any(s in k.lower() for s in SECRET_ARGS)]
    return f"{agent} ({', '.join(shown)})" if shown else agent


def difficulty_order(levels: Iterable[str]) -> list[str]:
    """Difficulty levels easy → hard first, any others after them in name order."""
    levels = set(levels)
    known = [d for d in DIFFICULTY_ORDER if d in levels]
    return known + sorted(levels - set(known))


def load_entry(path: Path) -> Entry:
    """Read one result: a run directory holding ``summary.json``, or the file itself."""
    file = path / "summary.json" if path.is_dir() else path
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise LeaderboardError(f"{path}: cannot read a summary.json ({exc.strerror or exc})") from None
    try:
        summary = Summary.model_validate_json(text)
    except ValidationError as exc:
        raise LeaderboardError(f"{file}: not a valid summary.json:\n{exc}") from None
    return Entry(summary, file, agent_label(summary.agent, summary.agent_args))


def group_by_env(entries: Sequence[Entry]) -> dict[str, list[Entry]]:
    """Entries per env id (registry order, then other ids by name), rows sorted by accuracy.

    Raises:
        LeaderboardError: results of one env id that are not comparable.
    """
    from agentenv.registration import env_ids

    groups: dict[str, list[Entry]] = {}
    for entry in entries:
        groups.setdefault(entry.summary.env_id, []).append(entry)
    for env_id, group in groups.items():
        _check_comparable(env_id, group)
        group.sort(key=lambda e: (-e.summary.metrics.get("accuracy", 0.0), e.label))
    order = {env_id: i for i, env_id in enumerate(env_ids())}
    return dict(sorted(groups.items(), key=lambda item: (order.get(item[0], len(order)), item[0])))


def _check_comparable(env_id: str, group: Sequence[Entry]) -> None:
    first = group[0]
    seen = {first.label: first}
    for other in group[1:]:
        a, b = first.summary, other.summary
        for what, x, y in (
            ("env version", a.env_version, b.env_version),
            ("split", a.split, b.split),
        ):
            if x != y:
                raise LeaderboardError(
                    f"{env_id}: {first.source} and {other.source} differ in {what} ({x!r} vs {y!r}); "
                    "a board compares runs of one version on one split"
                )
        for corpus in sorted(set(a.corpus_checksums) | set(b.corpus_checksums)):
            x, y = a.corpus_checksums.get(corpus), b.corpus_checksums.get(corpus)
            if x != y:
                raise LeaderboardError(
                    f"{env_id}: {first.source} and {other.source} were run on different {corpus!r} corpora "
                    f"(checksum {x} vs {y}); re-run them on the same corpus"
                )
        if other.label in seen:
            raise LeaderboardError(
                f"{env_id}: {seen[other.label].source} and {other.source} are both {other.label!r}; keep one"
            )
        seen[other.label] = other


# ---------------------------------------------------------------------------- Markdown


COLUMNS = ("agent", "accuracy (95% CI)", "mean reward", "mean tool calls", "mean turns",
           "invalid-action rate", "episodes")


def row_cells(summary: Summary, label: str) -> list[str]:
    """The formatted cells of one row, in :data:`COLUMNS` order."""
    acc = summary.intervals.get("accuracy")
    m = summary.metrics
    accuracy = f"{acc.mean:.3f} [{acc.ci_low:.3f}, {acc.ci_high:.3f}]" if acc else f"{m.get('accuracy', 0.0):.3f}"
    return [label, accuracy, f"{m.get('mean_reward', 0.0):.3f}", f"{m.get('mean_tool_calls', 0.0):.2f}",
            f"{m.get('mean_turns', 0.0):.2f}", f"{m.get('invalid_action_rate', 0.0):.3f}", str(summary.episodes)]


def env_caption(group: Sequence[Entry]) -> str:
    """What every row of an env's table shares: split, version, corpora, reward presets."""
    s = group[0].summary
    corpora = ", ".join(f"{k} `{v[:12]}`" for k, v in sorted(s.corpus_checksums.items())) or "none recorded"
    presets = ", ".join(sorted({e.summary.reward_preset for e in group}))
    return f"split `{s.split}`, env version {s.env_version}, corpus {corpora}, reward preset {presets}"


def markdown_tables(groups: Mapping[str, Sequence[Entry]]) -> str:
    """One Markdown table per env id, with a caption line."""
    parts = []
    for env_id, group in groups.items():
        lines = [f"### {env_id}", "", env_caption(group), "",
                 "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row_cells(e.summary, e.label)) + " |"
                  for e in group]
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


# ---------------------------------------------------------------------------- writing


def write_leaderboard(
    results: Sequence[Path], out: Path, *, plots: bool = True, title: str = "agentenv leaderboard"
) -> list[Path]:
    """Write the board for ``results`` (run directories or summary files) into ``out``; return the paths.

    Raises:
        LeaderboardError: unreadable or incomparable results (nothing is written).
        ImportError: ``plots=True`` without matplotlib (``pip install 'agentenv[leaderboard]'``).
    """
    if not results:
        raise LeaderboardError("no results given")
    groups = group_by_env([load_entry(Path(p)) for p in results])
    images: dict[str, bytes] = {}
    if plots:
        from agentenv.evaluation.leaderboard_plots import (
            accuracy_by_difficulty,
            accuracy_vs_tool_calls,
        )

        images = {PLOT_FILES[0]: accuracy_vs_tool_calls(groups), PLOT_FILES[1]: accuracy_by_difficulty(groups)}
    from agentenv.evaluation.leaderboard_html import render_html

    out.mkdir(parents=True, exist_ok=True)
    written = []
    md = out / "leaderboard.md"
    md.write_text(f"# {title}\n\n" + markdown_tables(groups), encoding="utf-8")
    html = out / "leaderboard.html"
    html.write_text(render_html(groups, images, title), encoding="utf-8")
    written += [md, html]
    for name, data in images.items():
        (out / name).write_bytes(data)
        written.append(out / name)
    return written
