"""PNGs of the LLM lessons: accuracy with CIs per arm, and the GRPO reward and tool-call curves."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

ARMS = {
    "sft-then-rl": ("random", "sft", "sft_rl_multi_turn", "sft_rl_single_turn"),
    "holdout-selection": ("random_agent", "all", "random", "matched_holdout", "mismatched_holdout"),
    "sft-more-data": ("random", "sft", "sft_grpo", "sft_grpo_first_call"),
}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _stamp_smoke_run(fig: Any, summary: Mapping[str, Any]) -> None:
    """Write "SMOKE RUN: not results" across a ``--quick`` run's figure: the PNG is what gets
    copied into slides, and the console's and summary's labels do not travel with it."""
    if summary.get("meta", {}).get("quick"):
        fig.text(
            0.5,
            0.5,
            "SMOKE RUN: not results",
            ha="center",
            va="center",
            fontsize=28,
            color="#c00000",
            alpha=0.25,
            rotation=20,
        )


def plot_summary(lesson: str, summary: Mapping[str, Any], out: Path) -> list[str]:
    """Write the lesson's PNGs into ``out``; return their names."""
    plt = _pyplot()
    written = []
    arms = [a for a in ARMS[lesson] if a in summary]
    fig, ax = plt.subplots(figsize=(7, 4))
    means = [summary[a]["accuracy"] for a in arms]
    lows = [summary[a]["accuracy"] - summary[a]["ci"][0] for a in arms]
    highs = [summary[a]["ci"][1] - summary[a]["accuracy"] for a in arms]
    ax.bar(range(len(arms)), means, yerr=[lows, highs], capsize=4, color="#4c72b0")
    ax.set_xticks(range(len(arms)), [a.replace("_", "\n") for a in arms], fontsize=8)
    ax.set_ylabel("test accuracy (95% CI)")
    ax.set_ylim(0.0, 1.0)  # an accuracy axis; all-zero quick runs drew -0.04 to 0.04
    ax.set_title(f"{lesson}: MediaSearch-v0 (compact, lookup + constraint), test split")
    _stamp_smoke_run(fig, summary)
    fig.tight_layout()
    name = f"{lesson.replace('-', '_')}_accuracy.png"
    fig.savefig(out / name, dpi=110)
    plt.close(fig)
    written.append(name)
    curves = {
        a: summary[a]["train"]["curve"]
        for a in ("sft_rl_multi_turn", "sft_rl_single_turn", "sft_grpo", "sft_grpo_first_call")
        if a in summary and "curve" in summary[a].get("train", {})
    }
    if curves:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        for arm, curve in curves.items():
            steps = [c["step"] for c in curve]
            axes[0].plot(steps, [c["reward"] for c in curve], marker=".", label=arm)
            axes[1].plot(steps, [c["tool_calls"] for c in curve], marker=".", label=arm)
        axes[0].set_title("GRPO reward per step (each arm's own reward)")
        axes[1].set_title("tool calls per rollout")
        axes[0].set_ylabel("mean reward")
        axes[1].set_ylabel("mean tool calls")
        for ax in axes:
            ax.set_xlabel("GRPO step")
            ax.legend(fontsize=7)
        _stamp_smoke_run(fig, summary)
        fig.tight_layout()
        curves_name = f"{lesson.replace('-', '_')}_curves.png"
        fig.savefig(out / curves_name, dpi=110)
        plt.close(fig)
        written.append(curves_name)
    return written
