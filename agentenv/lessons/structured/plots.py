"""Learning curves of the lessons, on the same axes as the random, bm25 and oracle baselines.

Curves are training episodes (train split), binned by timestep: the line is
the mean over seeds, the band the range between seeds. Baselines are
horizontal lines at their test-split score under the same env and reward,
and the trained policies' test score is a marker at the end of the curve.
matplotlib is imported here only (the ``leaderboard`` or ``rl`` extra).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

BINS = 20
_STYLES = {
    "random": ":",
    "bm25": "--",
    "oracle": "-.",
    "best fixed sequence": (0, (6, 2, 1, 2, 1, 2)),
}
_COLORS = ("tab:blue", "tab:red", "tab:green", "tab:purple")


def binned(
    curves: Sequence[Sequence[Mapping[str, float]]], key: str, total: int, bins: int = BINS
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Bin centres and the mean, min and max over runs of each bin's per-run mean of ``key`` (NaN for empty bins)."""
    edges = np.linspace(0, total, bins + 1)
    per_run = np.full((max(len(curves), 1), bins), np.nan)
    for i, rows in enumerate(curves):
        if not rows:
            continue
        t = np.array([r["timestep"] for r in rows])
        v = np.array([r[key] for r in rows])
        which = np.clip(np.digitize(t, edges) - 1, 0, bins - 1)
        for b in range(bins):
            if np.any(which == b):
                per_run[i, b] = v[which == b].mean()
    centres = (edges[:-1] + edges[1:]) / 2
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return centres, np.nanmean(per_run, 0), np.nanmin(per_run, 0), np.nanmax(per_run, 0)


def load_pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as err:
        raise ImportError('plots need matplotlib: pip install -e ".[rl]"') from err
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def mean_of(value: Any) -> float:
    """A summary metric's mean: the value itself, or its ``mean`` entry."""
    return float(value["mean"]) if isinstance(value, Mapping) else float(value)


def with_fixed(
    baselines: Mapping[str, Any] | None, fixed: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The baseline arms of a condition plus its best fixed sequence (drawn as one more reference line)."""
    arms = dict(baselines or {})
    if fixed:
        arms["best fixed sequence"] = fixed
    return arms


def _panel(
    ax: Any,
    runs: Sequence[Mapping[str, Any]],
    key: str,
    test_key: str | None,
    total: int,
    label: str,
    color: str,
    baselines: Mapping[str, Mapping[str, Any]] | None,
    baseline_key: str | None,
    offset: int = 0,
) -> None:
    x, mean, low, high = binned([r["curve"] for r in runs], key, total)
    x = x + offset
    total = total + offset
    ax.plot(x, mean, color=color, label=f"{label} (training)")
    if len(runs) > 1:
        ax.fill_between(x, low, high, color=color, alpha=0.2, linewidth=0)
    if test_key is not None:
        values = [
            float(np.mean([rec_value(rec, test_key) for rec in r["records"]]))
            for r in runs
            if r["records"]
        ]
        if values:
            ax.scatter(
                [total] * len(values),
                values,
                color=color,
                marker="o",
                zorder=3,
                s=18,
                label=f"{label} (test, per seed)",
            )
    for agent, metrics in (baselines or {}).items():
        if baseline_key and baseline_key in metrics:
            ax.axhline(
                mean_of(metrics[baseline_key]),
                color=color,
                linestyle=_STYLES.get(agent, ":"),
                linewidth=1,
                alpha=0.8,
                label=f"{agent} on {label} (test)",
            )


def rec_value(record: Mapping[str, Any], key: str) -> float:
    """A test episode record's value of ``key``: a record field, else a reward component."""
    if key in ("reward", "tool_calls", "turns"):
        return float(record[key])
    return float(record["components"].get(key, 0.0))


def _by(runs: Sequence[Mapping[str, Any]], key: str, group: str = "") -> list[Mapping[str, Any]]:
    return [r for r in runs if r["condition"].key == key and r["condition"].group == group]


def plot_lesson(
    name: str,
    runs: Sequence[Mapping[str, Any]],
    baselines: Mapping[str, Any],
    out: Path,
    total: int,
    warm: int = 0,
    fixed: Mapping[str, Any] | None = None,
) -> list[str]:
    """Write the lesson's PNGs into ``out``; returns their file names.

    With a warm start of ``warm`` steps, its curve fills ``[0, warm]`` and the conditions continue after it.
    ``fixed`` (``{condition label: arm}``) adds each condition's best fixed sequence as a reference line.
    """
    fixed = fixed or {}
    plt = load_pyplot()
    written: list[str] = []

    def save(fig: Any, filename: str) -> None:
        fig.tight_layout()
        fig.savefig(out / filename, dpi=110)
        plt.close(fig)
        written.append(filename)

    if name == "reward-hacking":
        fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
        for ax, key, color in zip(axes, ("strict", "lenient"), _COLORS[:2], strict=True):
            _panel(
                ax,
                _by(runs, key),
                "return",
                "reward",
                total,
                f"reward ({key})",
                color,
                with_fixed(baselines.get(key), fixed.get(key)),
                "reward",
            )
            x, mean, _, _ = binned([r["curve"] for r in _by(runs, key)], "accuracy", total)
            ax.plot(x, mean, color="black", linewidth=1, label="top-3 accuracy (training)")
            ax.set_title(f"masked PPO on RareDiseaseDiagnosis-v0, reward = {key}")
            ax.set_xlabel("training steps")
            ax.legend(fontsize=7)
        axes[0].set_ylabel("per-episode value")
        save(fig, "reward_hacking_reward.png")
        fig, ax = plt.subplots(figsize=(6.5, 4))
        for key, color in zip(("strict", "lenient"), _COLORS, strict=False):
            _panel(
                ax, _by(runs, key), "n_predictions", "n_predictions", total, key, color, None, None
            )
        ax.axhline(3, color="grey", linestyle="--", linewidth=1, label="the limit (3)")
        ax.set_title("Diseases listed per answer (the chosen k)")
        ax.set_xlabel("training steps")
        ax.set_ylabel("predictions per answer")
        ax.legend(fontsize=7)
        save(fig, "reward_hacking_k.png")
    elif name == "tool-cost":
        for metric, filename, title in (
            ("tool_calls", "tool_cost_tool_calls.png", "Tool calls per episode"),
            ("accuracy", "tool_cost_accuracy.png", "Accuracy"),
        ):
            fig, ax = plt.subplots(figsize=(7, 4.2))
            if warm:
                _panel(
                    ax,
                    _by(runs, "warm_start"),
                    metric,
                    None,
                    warm,
                    "warm start (accuracy+format)",
                    "grey",
                    None,
                    None,
                )
                ax.axvline(warm, color="grey", linewidth=0.8)
            for key, color in zip(("accuracy_only", "efficient"), _COLORS, strict=False):
                _panel(
                    ax,
                    _by(runs, key),
                    metric,
                    metric,
                    total,
                    key,
                    color,
                    {"best fixed sequence": fixed[key]}
                    if key in fixed and metric == "accuracy"
                    else None,
                    metric,
                    warm,
                )
            for agent, metrics in baselines.get(
                "accuracy_only", {}
            ).items():  # tool calls and accuracy do not
                ax.axhline(
                    mean_of(metrics[metric]),
                    color="black",
                    linestyle=_STYLES.get(agent, ":"),  # depend on
                    linewidth=1,
                    alpha=0.7,
                    label=f"{agent} (test)",
                )  # the reward: one line per baseline
            ax.set_title(f"{title}, masked PPO on MediaSearch-v0")
            ax.set_xlabel("training steps")
            ax.set_ylabel(metric.replace("_", " "))
            ax.legend(fontsize=7)
            save(fig, filename)
    else:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
        for ax, family in zip(axes, ("media_search", "rare_disease"), strict=True):
            for key, color in zip(("single_turn", "multi_turn"), _COLORS, strict=False):
                mine = _by(runs, key, family)
                label = mine[0]["condition"].env_id if mine else key
                _panel(
                    ax,
                    mine,
                    "accuracy",
                    "accuracy",
                    total,
                    label,
                    color,
                    with_fixed(baselines.get(f"{family} {key}"), fixed.get(f"{family} {key}")),
                    "accuracy",
                )
            ax.set_title(f"{family}: single- vs multi-turn (strict)")
            ax.set_xlabel("training steps")
            ax.legend(fontsize=6)
        axes[0].set_ylabel("accuracy")
        save(fig, "single_vs_multi_accuracy.png")
    return written
