"""Figures of the behaviour-cloning lessons: test accuracy per arm with 95% CIs, PPO curves, the BC loss.

Same conventions as :mod:`agentenv.lessons.structured.plots`: training curves are
binned training episodes (line: mean over seeds, band: range), test figures
are pooled over seeds with bootstrap intervals. matplotlib is imported here only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agentenv.lessons.structured.plots import binned, load_pyplot

_ARM_COLORS = {
    "bc": "tab:orange",
    "bc_ppo": "tab:red",
    "ppo": "tab:blue",
    "bm25": "grey",
    "best_fixed_sequence": "black",
    "all": "tab:blue",
    "random": "grey",
    "matched_holdout": "tab:green",
    "mismatched_holdout": "tab:red",
}


def _bars(
    ax: Any, arms: Sequence[str], blocks: Mapping[str, Mapping[str, Any]], title: str
) -> None:
    means = [blocks[a]["accuracy"] for a in arms]
    low = [m - blocks[a]["ci"][0] for m, a in zip(means, arms, strict=True)]
    high = [blocks[a]["ci"][1] - m for m, a in zip(means, arms, strict=True)]
    x = np.arange(len(arms))
    ax.bar(
        x,
        means,
        yerr=[low, high],
        capsize=4,
        color=[_ARM_COLORS.get(a, "tab:purple") for a in arms],
    )
    ax.set_xticks(x, [a.replace("_", " ") for a in arms], rotation=20, fontsize=8)
    ax.set_title(title, fontsize=9)
    ax.set_ylabel("test accuracy (95% CI)")


def _save(plt: Any, fig: Any, out: Path, name: str, written: list[str]) -> None:
    fig.tight_layout()
    fig.savefig(out / name, dpi=110)
    plt.close(fig)
    written.append(name)


def plot_sft_then_rl(
    summary: Mapping[str, Any], curves: Mapping[str, Mapping[str, Any]], out: Path, timesteps: int
) -> list[str]:
    """``sft_then_rl_classic_accuracy.png`` (arms per id) and ``sft_then_rl_classic_curves.png`` (PPO, BC loss)."""
    plt = load_pyplot()
    written: list[str] = []
    arms = ("bc", "bc_ppo", "ppo", "best_fixed_sequence", "bm25")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, key in zip(axes, ("multi_turn", "single_turn"), strict=True):
        _bars(ax, arms, summary[key], f"{summary[key]['env_id']} (strict)")
    _save(plt, fig, out, "sft_then_rl_classic_accuracy.png", written)
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    for ax, key in zip(axes[:2], ("multi_turn", "single_turn"), strict=True):
        for name, color in (("bc_ppo", "tab:red"), ("ppo", "tab:blue")):
            x, mean, low, high = binned(curves[key][name], "accuracy", timesteps)
            ax.plot(x, mean, color=color, label=f"{name.replace('_', ' + ').upper()} (training)")
            if len(curves[key][name]) > 1:
                ax.fill_between(x, low, high, color=color, alpha=0.2, linewidth=0)
        ax.axhline(
            summary[key]["bc"]["accuracy"], color="tab:orange", linestyle="--", label="BC (test)"
        )
        ax.axhline(
            summary[key]["best_fixed_sequence"]["accuracy"],
            color="black",
            linestyle=":",
            label="best fixed sequence (test)",
        )
        ax.set_title(f"PPO on {summary[key]['env_id']}", fontsize=9)
        ax.set_xlabel("training steps")
        ax.set_ylabel("accuracy")
        ax.legend(fontsize=7)
    for key, color in (("multi_turn", "tab:red"), ("single_turn", "tab:blue")):
        for i, losses in enumerate(curves[key]["bc_loss"]):
            axes[2].plot(
                np.linspace(0, 1, len(losses)),
                losses,
                color=color,
                alpha=0.7,
                label=key.replace("_", "-") if i == 0 else None,
            )
    axes[2].set_title("BC loss on the demonstrations", fontsize=9)
    axes[2].set_xlabel("fraction of the BC steps")
    axes[2].set_ylabel("cross-entropy")
    axes[2].legend(fontsize=7)
    _save(plt, fig, out, "sft_then_rl_classic_curves.png", written)
    return written


def plot_holdout_selection(summary: Mapping[str, Any], out: Path) -> list[str]:
    """``holdout_selection_classic.png``: test accuracy per training set, and each set's shift from test."""
    plt = load_pyplot()
    written: list[str] = []
    arms = ("all", "random", "matched_holdout", "mismatched_holdout")
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    _bars(
        axes[0],
        arms,
        summary["arms"],
        f"BC on selected demonstrations, {summary['meta']['env_id']}",
    )
    shifts = summary["shift"]
    names = [
        n
        for n in (*arms, "holdout_matched", "holdout_mismatched")
        if "classifier_auc" in shifts.get(n, {})
    ]
    auc = [shifts[n]["classifier_auc"] for n in names]
    low = [a - shifts[n]["classifier_ci"][0] for a, n in zip(auc, names, strict=True)]
    high = [shifts[n]["classifier_ci"][1] - a for a, n in zip(auc, names, strict=True)]
    x = np.arange(len(names))
    axes[1].bar(
        x, auc, yerr=[low, high], capsize=4, color=[_ARM_COLORS.get(n, "tab:purple") for n in names]
    )
    axes[1].axhline(0.5, color="black", linewidth=0.8, linestyle="--", label="no shift (AUC 0.5)")
    axes[1].set_xticks(x, [n.replace("_", " ") for n in names], rotation=20, fontsize=8)
    axes[1].set_ylim(0.3, 1.0)
    axes[1].set_title("shift-check vs the test tasks (classifier AUC, 95% CI)", fontsize=9)
    axes[1].legend(fontsize=7)
    axes[2].bar(
        x,
        [shifts[n]["kind_js"] for n in names],
        color=[_ARM_COLORS.get(n, "tab:purple") for n in names],
    )
    axes[2].set_xticks(x, [n.replace("_", " ") for n in names], rotation=20, fontsize=8)
    axes[2].set_title("shift-check vs the test tasks (kind JS divergence, bits)", fontsize=9)
    _save(plt, fig, out, "holdout_selection_classic.png", written)
    return written
