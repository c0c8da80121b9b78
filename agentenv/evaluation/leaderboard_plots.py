"""The leaderboard's PNG plots, drawn with matplotlib's object API on the Agg canvas.

matplotlib is optional (the ``leaderboard`` extra) and imported only here,
so ``import agentenv`` never loads it. Figures are built as
``matplotlib.figure.Figure`` objects, not through ``pyplot``: no global
backend switch, no global figure state, safe in any process. Each env id
gets a panel; an agent keeps its colour across panels. A panel where no
agent calls a tool (a single-turn env) would stack every point at x = 0, so
it is drawn as a dot plot instead: one row per agent, labelled on the axis. PNGs are written
without a "Software" stamp, so the same results give the same bytes with the
same matplotlib.

Every text drawn from a summary (agent labels, env ids, difficulty levels) is
drawn literally, ``parse_math=False``: a label such as ``a$\\oops$b`` is those
characters, not mathtext (which failed the whole board on an unknown symbol, and
could restyle a label); labels come on one line from
:func:`~agentenv.evaluation.leaderboard_rows.agent_label`.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentenv.evaluation.leaderboard_rows import Entry, difficulty_order, one_line

if TYPE_CHECKING:  # pragma: no cover - typing only
    from matplotlib.figure import Figure

Groups = Mapping[str, Sequence[Entry]]


def _matplotlib() -> Any:
    try:
        import matplotlib
        import matplotlib.figure
        import matplotlib.patches
    except ImportError as exc:
        raise ImportError(
            "leaderboard plots need matplotlib: pip install 'agentenv[leaderboard]' (or run with --no-plots)"
        ) from exc
    return matplotlib


def plot_library() -> Any:
    """matplotlib, imported; ImportError (naming ``--no-plots``) without it."""
    return _matplotlib()


LITERAL = {"parse_math": False}
"""Text properties of every user's string drawn: shown as it is, never parsed as mathtext."""


def _colours(groups: Groups) -> dict[str, tuple[float, float, float, float]]:
    labels = sorted({e.label for group in groups.values() for e in group})
    cmap = _matplotlib().colormaps["tab10"]
    return {label: cmap(i % 10) for i, label in enumerate(labels)}


def _figure(n_panels: int) -> tuple[Figure, list]:
    cols = min(n_panels, 2)
    rows = math.ceil(n_panels / cols)
    fig = _matplotlib().figure.Figure(figsize=(6.0 * cols, 4.2 * rows), layout="constrained")
    axes = [fig.add_subplot(rows, cols, i + 1) for i in range(n_panels)]
    return fig, axes


def _png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, metadata={"Software": None})
    return buffer.getvalue()


def accuracy_vs_tool_calls(groups: Groups) -> bytes:
    """One panel per env: accuracy (with its 95% CI) against mean tool calls, one point per agent."""
    colours = _colours(groups)
    fig, axes = _figure(len(groups))
    for ax, (env_id, group) in zip(axes, groups.items(), strict=True):
        if all(e.summary.metrics.get("mean_tool_calls", 0.0) < 1e-9 for e in group):
            _accuracy_rows(ax, env_id, group, colours)
            continue
        placed: list[tuple[float, float]] = []
        for entry in group:
            s = entry.summary
            acc = s.intervals["accuracy"]
            calls = s.metrics.get("mean_tool_calls", 0.0)
            ax.errorbar(
                calls,
                acc.mean,
                yerr=[[acc.mean - acc.ci_low], [acc.ci_high - acc.mean]],
                fmt="o",
                capsize=4,
                color=colours[entry.label],
                clip_on=False,
            )
            # Agents on (nearly) the same point get their labels stacked instead of overprinted.
            stacked = sum(abs(x - calls) < 0.05 and abs(y - acc.mean) < 0.03 for x, y in placed)
            placed.append((calls, acc.mean))
            ax.annotate(
                entry.label,
                (calls, acc.mean),
                textcoords="offset points",
                xytext=(7, 3 - 11 * stacked),
                fontsize=8,
                **LITERAL,
            )
        ax.set_title(one_line(env_id), **LITERAL)
        ax.set_xlabel("mean tool calls per episode")
        ax.set_ylabel("accuracy (95% CI)")
        ax.set_ylim(-0.05, 1.05)
        # Tool calls are never negative: the axis starts at 0 (a point there is drawn unclipped on the axis).
        ax.set_xlim(
            left=0.0,
            right=max([e.summary.metrics.get("mean_tool_calls", 0.0) for e in group] + [1.0]) * 1.3,
        )
        ax.grid(alpha=0.3)
    return _png(fig)


def _accuracy_rows(
    ax: Any, env_id: str, group: Sequence[Entry], colours: Mapping[str, Any]
) -> None:
    """A panel without tool calls: accuracy (95% CI) along x, one labelled row per agent, best on top."""
    for row, entry in enumerate(reversed(group)):
        acc = entry.summary.intervals["accuracy"]
        ax.errorbar(
            acc.mean,
            row,
            xerr=[[acc.mean - acc.ci_low], [acc.ci_high - acc.mean]],
            fmt="o",
            capsize=4,
            color=colours[entry.label],
        )
        ax.annotate(
            f"{acc.mean:.3f}",
            (acc.mean, row),
            textcoords="offset points",
            xytext=(0, 7),
            ha="center",
            fontsize=8,
        )
    ax.set_yticks(range(len(group)), [e.label for e in reversed(group)], fontsize=8, **LITERAL)
    ax.set_ylim(-0.6, len(group) - 0.4)
    ax.set_xlim(-0.05, 1.05)
    ax.set_title(f"{one_line(env_id)} (no tool calls)", **LITERAL)
    ax.set_xlabel("accuracy (95% CI)")
    ax.grid(axis="x", alpha=0.3)


def accuracy_by_difficulty(groups: Groups) -> bytes:
    """One panel per env: accuracy per difficulty level, a bar per agent."""
    colours = _colours(groups)
    fig, axes = _figure(len(groups))
    for ax, (env_id, group) in zip(axes, groups.items(), strict=True):
        levels = difficulty_order({d for e in group for d in e.summary.per_difficulty_accuracy})
        width = 0.8 / max(len(group), 1)
        for i, entry in enumerate(group):
            values = [entry.summary.per_difficulty_accuracy.get(d, 0.0) for d in levels]
            xs = [j - 0.4 + width * (i + 0.5) for j in range(len(levels))]
            ax.bar(xs, values, width=width, color=colours[entry.label])
            for x, value in zip(xs, values, strict=True):
                if value < 0.005:  # a bar of height 0 is invisible: say 0 where it would stand
                    ax.annotate(
                        "0",
                        (x, 0.0),
                        textcoords="offset points",
                        xytext=(0, 2),
                        ha="center",
                        fontsize=7,
                        color=colours[entry.label],
                    )
        ax.set_xticks(range(len(levels)), [one_line(d) for d in levels], **LITERAL)
        ax.set_title(one_line(env_id), **LITERAL)
        ax.set_xlabel("difficulty")
        ax.set_ylabel("accuracy")
        ax.set_ylim(0, 1.05)
        ax.grid(axis="y", alpha=0.3)
    handles = [
        _matplotlib().patches.Patch(color=colour, label=label) for label, colour in colours.items()
    ]
    legend = fig.legend(
        handles=handles, loc="outside lower center", ncols=min(len(handles), 6), fontsize=9
    )
    for text in legend.get_texts():
        text.set_parse_math(False)
    return _png(fig)
