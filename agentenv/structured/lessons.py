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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from agentenv.errors import UserInputError
from agentenv.structured.stats import diff_ci, mean_ci
from agentenv.structured.training import TrainConfig, train

ACCURACY_PLUS_FORMAT: dict[str, Any] = {
    "name": "accuracy+format",
    "weights": {"accuracy": 1.0, "format": 0.1},
}
"""The tool-cost lesson's free-tools reward: accuracy, plus 0.1 for a well-formed answered episode."""
BASELINES = ("random", "bm25", "oracle")


@dataclass(frozen=True)
class Budget:
    """How much a lesson trains and evaluates."""

    seeds: int
    """Training seeds 0..seeds-1 (unless ``seed_list`` names them)."""
    timesteps: int
    eval_episodes: int
    """Test episodes per trained policy."""
    baseline_episodes: int
    """Test episodes per baseline agent."""
    warm_timesteps: int = 0
    """Steps of the shared warm start before the conditions split (tool-cost only)."""
    train_tasks: int = 2_000
    """Train-split tasks each run draws from (quick runs use fewer: each new patient costs ~6 ms to simulate)."""
    seed_list: tuple[int, ...] | None = None
    """Explicit training seeds (``--seed-list 3,4``); ``None``: 0..seeds-1."""

    @property
    def seed_values(self) -> tuple[int, ...]:
        """The seeds to train: ``seed_list``, else 0..seeds-1."""
        return self.seed_list if self.seed_list is not None else tuple(range(self.seeds))


@dataclass(frozen=True)
class Condition:
    """One trained setting of a lesson: its key in ``summary.json``, env id, reward and env kwargs."""

    key: str
    env_id: str
    reward: Any
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    group: str = ""
    """Where the condition sits in ``summary.json`` (single-vs-multi: the family)."""


@dataclass(frozen=True)
class Lesson:
    """A lesson: its conditions, default and quick budgets, and the metrics it reports."""

    name: str
    conditions: tuple[Condition, ...]
    default: Budget
    quick: Budget
    metrics: Mapping[str, Callable[[Mapping[str, Any]], float]]
    """Summary metric name -> value of one test episode record."""
    warm_start: Condition | None = None
    """Trained first, once per seed; every condition continues from it (see the tool-cost lesson)."""


def _comp(key: str) -> Callable[[Mapping[str, Any]], float]:
    return lambda record: float(record["components"].get(key, 0.0))


LESSONS: dict[str, Lesson] = {
    "reward-hacking": Lesson(
        "reward-hacking",
        (
            Condition("strict", "RareDiseaseDiagnosis-v0", "strict"),
            Condition("lenient", "RareDiseaseDiagnosis-v0", "lenient"),
        ),
        default=Budget(seeds=3, timesteps=20_000, eval_episodes=300, baseline_episodes=300),
        quick=Budget(
            seeds=1, timesteps=5_000, eval_episodes=60, baseline_episodes=60, train_tasks=400
        ),
        metrics={
            "mean_predictions": _comp("n_predictions"),
            "top3_accuracy": _comp("hit@3"),
            "reward": lambda r: float(r["reward"]),
            "hit_any": _comp("hit@any"),
        },
    ),
    "tool-cost": Lesson(
        "tool-cost",
        (
            Condition("accuracy_only", "MediaSearch-v0", ACCURACY_PLUS_FORMAT),
            Condition("efficient", "MediaSearch-v0", "efficient"),
        ),
        default=Budget(
            seeds=3,
            timesteps=25_000,
            eval_episodes=300,
            baseline_episodes=300,
            warm_timesteps=15_000,
        ),
        quick=Budget(
            seeds=1, timesteps=3_000, eval_episodes=60, baseline_episodes=60, warm_timesteps=4_000
        ),
        metrics={
            "tool_calls": lambda r: float(r["tool_calls"]),
            "accuracy": _comp("accuracy"),
            "reward": lambda r: float(r["reward"]),
        },
        warm_start=Condition("warm_start", "MediaSearch-v0", ACCURACY_PLUS_FORMAT),
    ),
    "single-vs-multi": Lesson(
        "single-vs-multi",
        (
            Condition("single_turn", "MediaSearch-SingleTurn-v0", "strict", group="media_search"),
            Condition("multi_turn", "MediaSearch-v0", "strict", group="media_search"),
            Condition(
                "single_turn", "RareDiseaseDiagnosis-SingleTurn-v0", "strict", group="rare_disease"
            ),
            Condition("multi_turn", "RareDiseaseDiagnosis-v0", "strict", group="rare_disease"),
        ),
        default=Budget(seeds=3, timesteps=15_000, eval_episodes=300, baseline_episodes=300),
        quick=Budget(
            seeds=1, timesteps=2_000, eval_episodes=40, baseline_episodes=40, train_tasks=400
        ),
        metrics={
            "accuracy": _comp("accuracy"),
            "reward": lambda r: float(r["reward"]),
            "tool_calls": lambda r: float(r["tool_calls"]),
        },
    ),
}


def budget_for(
    lesson: Lesson,
    *,
    quick: bool,
    seeds: int | None = None,
    timesteps: int | None = None,
    eval_episodes: int | None = None,
    baseline_episodes: int | None = None,
    seed_list: Sequence[int] | None = None,
) -> Budget:
    """The lesson's default or quick budget with the given overrides; bad values name the flag.

    ``seeds`` N always means seeds 0..N-1; ``seed_list`` names other seeds (``--seed-list 3,4``).
    Baseline agents play the first ``baseline_episodes`` of each seed's test episodes (by default
    all of them: the same episodes as the trained policies)."""
    budget = lesson.quick if quick else lesson.default
    if seeds is not None and seed_list is not None:
        raise UserInputError("give --seeds N (seeds 0..N-1) or --seed-list A,B,..., not both")
    overrides = {
        "seeds": seeds,
        "timesteps": timesteps,
        "eval_episodes": eval_episodes,
        "baseline_episodes": baseline_episodes,
    }
    for name, value in overrides.items():
        if value is not None and value < (0 if name == "baseline_episodes" else 1):
            raise UserInputError(f"--{name.replace('_', '-')} must be >= 1, got {value}")
    budget = replace(budget, **{k: v for k, v in overrides.items() if v is not None})
    if eval_episodes is not None and baseline_episodes is None:
        budget = replace(budget, baseline_episodes=eval_episodes)
    if budget.baseline_episodes > budget.eval_episodes:
        raise UserInputError(
            f"--baseline-episodes {budget.baseline_episodes} is more than --eval-episodes "
            f"{budget.eval_episodes}: baselines play the policies' episodes; give at most that many"
        )
    if seed_list is not None:
        values = tuple(int(v) for v in seed_list)
        if not values or any(v < 0 for v in values) or len(set(values)) != len(values):
            raise UserInputError(
                f"--seed-list must name distinct seeds >= 0, e.g. 3,4; got {list(seed_list)}"
            )
        budget = replace(budget, seeds=len(values), seed_list=values)
    return budget


def _ensure_sb3_agent() -> None:
    """The ``sb3`` agent is declared as an entry point; register it in code if this install predates that."""
    from agentenv.evaluation.agents import agent_names, register_agent
    from agentenv.structured.sb3_agent import make_sb3_agent

    if "sb3" not in agent_names():
        register_agent("sb3", make_sb3_agent)


def score(
    agent: str,
    env_id: str,
    reward: Any,
    env_kwargs: Mapping[str, Any],
    *,
    episodes: int,
    seed: int,
    agent_args: Mapping[str, str] | None = None,
    split: str = "test",
) -> list[dict[str, Any]]:
    """Episode records of ``agent`` on ``split`` through the evaluation runner (what ``agentenv eval`` runs)."""
    from agentenv.evaluation.runner import RunConfig, run

    config = RunConfig(
        env_id=env_id,
        agent=agent,
        split=split,
        episodes=episodes,
        seed=seed,
        agent_args=tuple((agent_args or {}).items()),
        env_kwargs=tuple({"reward": reward, **dict(env_kwargs)}.items()),
    )
    result = run(config, progress=False)
    return [
        {
            "reward": r["reward"],
            "tool_calls": r["tool_calls"],
            "turns": r["turns"],
            "kind": r["kind"],
            "components": dict(r["reward_components"]),
        }
        for r in result.records
    ]


def _summaries(lesson: Lesson, records: Sequence[Mapping[str, Any]], seed: int) -> dict[str, Any]:
    return {
        name: mean_ci([fn(r) for r in records], seed=seed) for name, fn in lesson.metrics.items()
    }


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
    the episodes its policies played (:mod:`agentenv.structured.fixed_sequences`), and a verdict on
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
    _ensure_sb3_agent()
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
                    f"{k}={v['mean']:.3f}" for k, v in _summaries(lesson, records, seed).items()
                )
            )
    baselines = _baselines(lesson, budget, log)
    fixed = _fixed_sequences(lesson, budget, log) if fixed_sequences else {}
    summary = _summary(lesson, budget, runs, baselines, fixed, algo=algo, quick=quick)
    summary["meta"]["wall_s"] = round(time.perf_counter() - start, 1)
    if plots:
        from agentenv.structured.plots import plot_lesson

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


def _label(cond: Condition) -> str:
    return f"{cond.group + ' ' if cond.group else ''}{cond.key}"


def _baselines(
    lesson: Lesson, budget: Budget, log: Callable[[str], None]
) -> dict[str, dict[str, Any]]:
    """``{condition label: {agent: metrics}}`` for random, bm25 and oracle on each condition's env and reward,
    on the test episodes the trained policies played (the first ``baseline_episodes`` of each seed's)."""
    out: dict[str, dict[str, Any]] = {}
    if budget.baseline_episodes < 1:
        return out
    for cond in lesson.conditions:
        label = _label(cond)
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
            out[label][agent] = _arm(lesson, records)
        log(
            f"{lesson.name}: baselines on {cond.env_id} ({label}): "
            + "; ".join(
                f"{a} accuracy={m['accuracy']:.3f} reward={m['reward']['mean']:.3f}"
                for a, m in out[label].items()
            )
        )
    return out


def _arm(lesson: Lesson, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """An arm of the summary: its ``accuracy`` and ``ci`` first, then each of the lesson's metrics."""
    acc = mean_ci([_comp("accuracy")(r) for r in records], seed=0)
    metrics = {
        **_summaries(lesson, records, 0),
        "reward": mean_ci([float(r["reward"]) for r in records], seed=0),
    }
    return {
        "accuracy": acc["mean"],
        "ci": acc["ci"],
        "episodes": len(records),
        **{k: v for k, v in metrics.items() if k != "accuracy"},
    }


def _fixed_sequences(
    lesson: Lesson, budget: Budget, log: Callable[[str], None]
) -> dict[str, dict[str, Any]]:
    """``{condition label: arm}``: each condition's best fixed menu sequence on the policies' test episodes."""
    from agentenv.structured.fixed_sequences import best_fixed_sequence

    out: dict[str, dict[str, Any]] = {}
    for cond in lesson.conditions:
        _, arm = best_fixed_sequence(
            cond.env_id,
            cond.reward,
            cond.env_kwargs,
            episodes=budget.eval_episodes,
            seeds=budget.seed_values,
        )
        out[_label(cond)] = arm
        log(
            f"{lesson.name}: best fixed sequence on {cond.env_id} ({_label(cond)}): {' -> '.join(arm['sequence'])}: "
            f"accuracy {arm['accuracy']:.3f} {arm['ci']}, reward {arm['reward']:.3f}; "
            f"{arm['search']['sequences']} sequences in {arm['search']['wall_s']:.0f} s"
        )
    return out


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


def _summary(
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
        for metric, value in _summaries(lesson, records, 0).items():
            block[metric] = value["mean"]
            block[f"{metric}_ci"] = value["ci"]
        acc = mean_ci([_comp("accuracy")(r) for r in records], seed=0)
        block["accuracy"], block["ci"] = acc["mean"], acc["ci"]
        if _label(cond) in fixed:
            block["best_fixed_sequence"] = fixed[_label(cond)]
            block["versus_best_fixed"] = versus_fixed(
                [float(r["reward"]) for r in records], fixed[_label(cond)]
            )
        block["per_seed"] = [
            {
                "seed": r["seed"],
                **{k: v["mean"] for k, v in _summaries(lesson, r["records"], 0).items()},
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
