"""Summarising a lesson's runs: per-condition metrics with bootstrap intervals, the effects each lesson
is about, the comparison with the best fixed sequence, and the versions that produced them.

Why a module of its own: this is pure bookkeeping over episode records, apart
from the training and scoring that produce them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agentenv.evaluation.provenance import code_commit
from agentenv.lessons.structured.lesson_definitions import Budget, Condition, Lesson, component_mean
from agentenv.lessons.structured.stats import diff_ci, mean_ci
from agentenv.lessons.structured.training import TrainConfig


def arm_summaries(
    lesson: Lesson, records: Sequence[Mapping[str, Any]], seed: int
) -> dict[str, Any]:
    return {
        name: mean_ci([fn(r) for r in records], seed=seed) for name, fn in lesson.metrics.items()
    }


def arm_label(cond: Condition) -> str:
    return f"{cond.group + ' ' if cond.group else ''}{cond.key}"


def arm_name(lesson: Lesson, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """An arm of the summary: its ``accuracy`` and ``ci`` first, then each of the lesson's metrics."""
    acc = mean_ci([component_mean("accuracy")(r) for r in records], seed=0)
    metrics = {
        **arm_summaries(lesson, records, 0),
        "reward": mean_ci([float(r["reward"]) for r in records], seed=0),
    }
    return {
        "accuracy": acc["mean"],
        "ci": acc["ci"],
        "episodes": len(records),
        **{k: v for k, v in metrics.items() if k != "accuracy"},
    }


def versus_fixed(
    policy_rewards: Sequence[float], fixed: Mapping[str, Any], *, seed: int = 0
) -> dict[str, Any]:
    """Whether the policies beat the best fixed sequence: the difference in mean return with its interval,
    both intervals, and ``learned`` (true only when the policies' interval lies wholly above the sequence's).

    Example:
        >>> v = versus_fixed([1.0] * 50 + [0.0] * 50, {"reward": 0.2, "reward_ci": [0.1, 0.3]})
        >>> v["learned"], v["difference"]
        (True, 0.3)
    """
    policy = mean_ci(policy_rewards, seed=seed)
    learned = bool(policy["ci"][0] > fixed["reward_ci"][1])
    return {
        "policy_reward": policy["mean"],
        "policy_ci": policy["ci"],
        "fixed_reward": fixed["reward"],
        "fixed_ci": fixed["reward_ci"],
        "difference": round(policy["mean"] - fixed["reward"], 4),
        "learned": learned,
        "claim": (
            "learned: the policies beat the best fixed sequence (intervals do not overlap)"
            if learned
            else "not learned: the policies do not beat the best fixed sequence with non-overlapping intervals"
        ),
    }


def arm_summary(
    lesson: Lesson,
    budget: Budget,
    runs: list[dict[str, Any]],
    baselines: dict[str, Any],
    fixed: Mapping[str, Any],
    *,
    algo: str,
    quick: bool,
) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    pooled: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for cond in lesson.conditions:
        mine = [r for r in runs if r["condition"] == cond and not r.get("warm_start")]
        records = [rec for r in mine for rec in r["records"]]
        pooled[(cond.group, cond.key)] = records
        block: dict[str, Any] = {"env_id": cond.env_id, "reward": cond.reward}
        for metric, value in arm_summaries(lesson, records, 0).items():
            block[metric] = value["mean"]
            block[f"{metric}_ci"] = value["ci"]
        acc = mean_ci([component_mean("accuracy")(r) for r in records], seed=0)
        block["accuracy"], block["ci"] = acc["mean"], acc["ci"]
        if arm_label(cond) in fixed:
            block["best_fixed_sequence"] = fixed[arm_label(cond)]
            block["versus_best_fixed"] = versus_fixed(
                [float(r["reward"]) for r in records], fixed[arm_label(cond)]
            )
        block["per_seed"] = [
            {
                "seed": r["seed"],
                **{k: v["mean"] for k, v in arm_summaries(lesson, r["records"], 0).items()},
                "train_wall_s": round(r["train_wall_s"], 1),
                "eval_wall_s": round(r["eval_wall_s"], 1),
                "run_dir": str(r["dir"]),
            }
            for r in mine
        ]
        block["test_episodes"] = len(records)
        (summary.setdefault(cond.group, {}) if cond.group else summary)[cond.key] = block
    summary["effects"] = _effects(lesson, pooled)
    summary["baselines"] = baselines
    summary["best_fixed_sequence"] = dict(fixed)
    summary["meta"] = {
        "lesson": lesson.name,
        "quick": quick,
        "algo": algo,
        "seeds": list(budget.seed_values),
        "timesteps_per_run": budget.timesteps,
        "test_episodes_per_run": budget.eval_episodes,
        "train_tasks": budget.train_tasks,
        "n_envs": TrainConfig.n_envs,
        "test_policy": "sampled from the policy with each episode's generator (sb3 agent, deterministic=false)",
        "warm_start": None
        if lesson.warm_start is None or budget.warm_timesteps < 1
        else {
            "reward": lesson.warm_start.reward,
            "timesteps": budget.warm_timesteps,
            "train_wall_s": [round(r["train_wall_s"], 1) for r in runs if r.get("warm_start")],
        },
        "baseline_episodes": budget.baseline_episodes,
        "baseline_plan": "random, bm25 and oracle play the first baseline_episodes test episodes of each seed's plan: "
        "the episodes the trained policies played",
        "fixed_sequences": None
        if not fixed
        else {
            "depth": next(iter(fixed.values()))["search"]["depth"],
            "full_depth": next(iter(fixed.values()))["search"]["full_depth"],
            "beam": next(iter(fixed.values()))["search"]["beam"],
            "rule": "every sequence of distinct tool entries (all orders, all of them up to full_depth, the beam's best "
            "prefixes beyond, at most depth) then one answer entry, scored on the policies' test episodes; "
            "the best by mean return; learned only where the policies' return interval lies above its",
        },
        "train_split": "train",
        "eval_split": "test",
        "ci": "95% percentile bootstrap over test episodes pooled across seeds (1,000 resamples)",
        "versions": _versions(),
        **code_commit(),
    }
    return summary


def _effects(
    lesson: Lesson, pooled: Mapping[tuple[str, str], Sequence[Mapping[str, Any]]]
) -> dict[str, Any]:
    """The differences each lesson is about, with bootstrap intervals, whatever their sign."""
    m = lesson.metrics
    if lesson.name == "reward-hacking":
        a, b = pooled[("", "lenient")], pooled[("", "strict")]
        return {
            f"lenient_minus_strict_{k}": diff_ci([m[k](r) for r in a], [m[k](r) for r in b])
            for k in ("mean_predictions", "top3_accuracy", "reward")
        }
    if lesson.name == "tool-cost":
        a, b = pooled[("", "efficient")], pooled[("", "accuracy_only")]
        return {
            f"efficient_minus_accuracy_only_{k}": diff_ci(
                [m[k](r) for r in a], [m[k](r) for r in b]
            )
            for k in ("tool_calls", "accuracy")
        }
    return {
        f"{family}_multi_minus_single_accuracy": diff_ci(
            [m["accuracy"](r) for r in pooled[(family, "multi_turn")]],
            [m["accuracy"](r) for r in pooled[(family, "single_turn")]],
        )
        for family in sorted({c.group for c in lesson.conditions})
    }


def _versions() -> dict[str, str]:
    import gymnasium

    import agentenv

    out = {
        "agentenv": agentenv.__version__,
        "gymnasium": gymnasium.__version__,
        "numpy": np.__version__,
    }
    try:
        import stable_baselines3
        import torch

        out |= {"stable_baselines3": stable_baselines3.__version__, "torch": torch.__version__}
    except ImportError:
        pass
    return out
