"""The workshop's reward lessons as learning runs: train with seeds, score on test through the harness, summarise.

Each lesson is a set of conditions (an env id and a reward); each condition
is trained for ``seeds`` seeds on the train split, and every trained policy
is scored on the test split by the evaluation runner with the ``sb3`` agent,
exactly as ``agentenv eval --agent sb3`` would. The random, bm25 and oracle
baselines are scored by the same runner on the same envs and rewards, for
the plots' reference lines. Nothing is tuned on test: the budgets below were
set from training curves on the train split.

* ``reward-hacking``: PPO on ``RareDiseaseDiagnosis-v0`` under ``strict``
  and ``lenient``; how many diseases the policy lists, its honest top-3
  accuracy and its reward.
* ``tool-cost``: PPO on ``MediaSearch-v0`` under accuracy plus format
  (``accuracy_only``: tool calls are free) and under ``efficient``; tool
  calls per episode and accuracy.
* ``single-vs-multi``: the same learner on each family's single-turn and
  multi-turn id under ``strict``; test accuracy.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentenv.errors import UserInputError
from agentenv.lessons.structured.lesson_definitions import (
    ACCURACY_PLUS_FORMAT,
    BASELINES,
    LESSONS,
    Budget,
    Condition,
    Lesson,
    budget_for,
)
from agentenv.lessons.structured.lesson_scoring import ensure_sb3_agent, score
from agentenv.lessons.structured.lesson_summary import (
    arm_label,
    arm_name,
    arm_summaries,
    arm_summary,
    versus_fixed,
)
from agentenv.lessons.structured.training import TrainConfig, train

__all__ = [
    "ACCURACY_PLUS_FORMAT",
    "BASELINES",
    "LESSONS",
    "Budget",
    "Condition",
    "Lesson",
    "budget_for",
    "run_lesson",
    "score",
    "versus_fixed",
]


def run_lesson(
    name: str,
    out: Path,
    *,
    quick: bool = False,
    seeds: int | None = None,
    timesteps: int | None = None,
    eval_episodes: int | None = None,
    baseline_episodes: int | None = None,
    algo: str = "maskable_ppo",
    plots: bool = True,
    log: Callable[[str], None] = print,
    seed_list: Sequence[int] | None = None,
    fixed_sequences: bool = True,
) -> dict[str, Any]:
    """Run a lesson end to end and write ``out/summary.json``, ``out/*.png`` and ``out/runs/``; returns the summary.

    With ``fixed_sequences`` every condition also gets its menu's best fixed action sequence, scored on
    the episodes its policies played (:mod:`agentenv.lessons.structured.fixed_sequences`), and a verdict on
    whether the policies beat it.
    """
    if name not in LESSONS:
        raise UserInputError(f"unknown lesson {name!r}; choose one of {', '.join(LESSONS)}")
    lesson = LESSONS[name]
    budget = budget_for(
        lesson,
        quick=quick,
        seeds=seeds,
        timesteps=timesteps,
        eval_episodes=eval_episodes,
        baseline_episodes=baseline_episodes,
        seed_list=seed_list,
    )
    ensure_sb3_agent()
    start = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    runs: list[dict[str, Any]] = []
    warm = _warm_starts(lesson, budget, algo, out, runs, log)
    for cond in lesson.conditions:
        for seed in budget.seed_values:
            run_dir = (
                out / "runs" / f"{cond.group + '-' if cond.group else ''}{cond.key}" / f"seed{seed}"
            )
            config = TrainConfig(
                cond.env_id,
                algo=algo,
                reward=cond.reward,
                timesteps=budget.timesteps,
                seed=seed,
                env_kwargs=dict(cond.env_kwargs),
                init_from=warm.get(seed),
                train_tasks=budget.train_tasks,
            )
            trained = train(config, run_dir)
            t0 = time.perf_counter()
            records = score(
                "sb3",
                cond.env_id,
                cond.reward,
                cond.env_kwargs,
                episodes=budget.eval_episodes,
                seed=seed,
                agent_args={"path": str(run_dir)},
            )
            eval_s = time.perf_counter() - t0
            (run_dir / "test_episodes.jsonl").write_text(
                "".join(json.dumps(r) + "\n" for r in records)
            )
            runs.append(
                {
                    "condition": cond,
                    "seed": seed,
                    "curve": trained.curve,
                    "records": records,
                    "train_wall_s": trained.wall_s,
                    "eval_wall_s": eval_s,
                    "dir": run_dir,
                }
            )
            log(
                f"{name}: {cond.group + ' ' if cond.group else ''}{cond.key} seed {seed}: trained "
                f"{budget.timesteps} steps in {trained.wall_s:.0f} s; test "
                + ", ".join(
                    f"{k}={v['mean']:.3f}" for k, v in arm_summaries(lesson, records, seed).items()
                )
            )
    baselines = _baselines(lesson, budget, log)
    fixed = _fixed_sequences(lesson, budget, log) if fixed_sequences else {}
    summary = arm_summary(lesson, budget, runs, baselines, fixed, algo=algo, quick=quick)
    summary["meta"]["wall_s"] = round(time.perf_counter() - start, 1)
    if plots:
        from agentenv.lessons.structured.plots import plot_lesson

        summary["meta"]["plots"] = plot_lesson(
            name, runs, baselines, out, budget.timesteps, budget.warm_timesteps, fixed=fixed
        )
    summary["meta"]["wall_s"] = round(time.perf_counter() - start, 1)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def _warm_starts(
    lesson: Lesson,
    budget: Budget,
    algo: str,
    out: Path,
    runs: list[dict[str, Any]],
    log: Callable[[str], None],
) -> dict[int, str]:
    """Train the lesson's shared warm start once per seed; ``{seed: run dir}`` (empty without one).

    Why: a policy that has not yet found the tools' value loses nothing by dropping them, so under a
    tool cost a cold start collapses to answering at once (accuracy 0 and no tool calls in both cold starts
    tried: seeds 0 and 1, 30k steps each). An LLM starts RL already calling tools; the warm start plays that part, and both rewards
    continue from the same policy, so the difference between them is the reward's alone.
    """
    cond = lesson.warm_start
    if cond is None or budget.warm_timesteps < 1:
        return {}
    dirs: dict[int, str] = {}
    for seed in budget.seed_values:
        run_dir = out / "runs" / cond.key / f"seed{seed}"
        trained = train(
            TrainConfig(
                cond.env_id,
                algo=algo,
                reward=cond.reward,
                timesteps=budget.warm_timesteps,
                seed=seed,
                env_kwargs=dict(cond.env_kwargs),
                train_tasks=budget.train_tasks,
            ),
            run_dir,
        )
        runs.append(
            {
                "condition": cond,
                "seed": seed,
                "curve": trained.curve,
                "records": [],
                "train_wall_s": trained.wall_s,
                "eval_wall_s": 0.0,
                "dir": run_dir,
                "warm_start": True,
            }
        )
        dirs[seed] = str(run_dir)
        log(
            f"{lesson.name}: warm start seed {seed}: {budget.warm_timesteps} steps in {trained.wall_s:.0f} s"
        )
    return dirs


def _baselines(
    lesson: Lesson, budget: Budget, log: Callable[[str], None]
) -> dict[str, dict[str, Any]]:
    """``{condition label: {agent: metrics}}`` for random, bm25 and oracle on each condition's env and reward,
    on the test episodes the trained policies played (the first ``baseline_episodes`` of each seed's)."""
    out: dict[str, dict[str, Any]] = {}
    if budget.baseline_episodes < 1:
        return out
    for cond in lesson.conditions:
        label = arm_label(cond)
        out[label] = {}
        for agent in BASELINES:
            records = [
                rec
                for seed in budget.seed_values
                for rec in score(
                    agent,
                    cond.env_id,
                    cond.reward,
                    cond.env_kwargs,
                    episodes=budget.baseline_episodes,
                    seed=seed,
                )
            ]
            out[label][agent] = arm_name(lesson, records)
        log(
            f"{lesson.name}: baselines on {cond.env_id} ({label}): "
            + "; ".join(
                f"{a} accuracy={m['accuracy']:.3f} reward={m['reward']['mean']:.3f}"
                for a, m in out[label].items()
            )
        )
    return out


def _fixed_sequences(
    lesson: Lesson, budget: Budget, log: Callable[[str], None]
) -> dict[str, dict[str, Any]]:
    """``{condition label: arm}``: each condition's best fixed menu sequence on the policies' test episodes."""
    from agentenv.lessons.structured.fixed_sequences import best_fixed_sequence

    out: dict[str, dict[str, Any]] = {}
    for cond in lesson.conditions:
        _, arm = best_fixed_sequence(
            cond.env_id,
            cond.reward,
            cond.env_kwargs,
            episodes=budget.eval_episodes,
            seeds=budget.seed_values,
        )
        out[arm_label(cond)] = arm
        log(
            f"{lesson.name}: best fixed sequence on {cond.env_id} ({arm_label(cond)}): {' -> '.join(arm['sequence'])}: "
            f"accuracy {arm['accuracy']:.3f} {arm['ci']}, reward {arm['reward']:.3f}; "
            f"{arm['search']['sequences']} sequences in {arm['search']['wall_s']:.0f} s"
        )
    return out
