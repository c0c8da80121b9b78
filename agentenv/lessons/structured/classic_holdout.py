"""``agentenv reproduce holdout-selection-classic``: holdout-loss selection of demonstrations for behaviour cloning.

The workshop's claim: selecting training data by holdout loss hurts when the
holdout does not match the test set. Here on ``MediaSearch-v0`` (``strict``),
with the classic policy network and behaviour cloning:

* **candidates**: menu-oracle demonstrations (:mod:`agentenv.lessons.structured.menu_oracle`)
  of the first ``candidate_tasks`` train tasks (solved ones; every kind);
* **holdouts** (validation split, never test): *matched*, demonstrations of
  the first ``holdout_tasks`` validation tasks (every kind, like test), and
  *mismatched*, demonstrations of the first ``holdout_tasks`` validation tasks
  of kind ``constraint`` only;
* **score** of a candidate: the holdout's BC loss before minus after one
  gradient step on that candidate alone
  (:func:`agentenv.lessons.structured.behaviour_cloning.holdout_gains`), from a
  reference policy cloned for ``reference_steps`` minibatches on all candidates;
* **training sets**: all candidates, a random 30%, the top 30% by the matched
  holdout's score and the top 30% by the mismatched one
  (:func:`agentenv.data.selection.select_top` / ``select_random``);
* each set trains the PPO lessons' policy network by behaviour cloning for the
  same ``bc_steps`` minibatches (so only the data differs), per seed, and is
  scored on the runner's test episodes for that seed.

``agentenv data shift-check`` (:func:`agentenv.data.shift_check.compare_rows`)
compares each holdout and each training set's task prompts (seed 0's
selections) with the test split's tasks. The claim is marked reproduced when
the mismatched selection scores below both the random 30% and the matched
selection, each with a paired 95% CI of the difference below 0. The budgets
and the mismatched kind were fixed before any test run.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from agentenv.lessons.structured.classic_common import (
    accuracy_of,
    arm,
    paired_gain_ci,
    pooled,
    score_policy,
    versions,
)

NAME = "holdout-selection-classic"
ENV_ID = "MediaSearch-v0"
REWARD = "strict"
ALGO = "ppo"
"""Plain PPO, the algorithm of the committed PPO lessons: every menu entry may be sampled (no action masks)."""
MISMATCHED_KIND = "constraint"
"""The mismatched holdout's only kind (the LLM holdout-selection lesson's choice)."""
SETS = ("all", "random", "matched_holdout", "mismatched_holdout")


@dataclass(frozen=True)
class HoldoutBudget:
    """How much the lesson demonstrates, selects, clones and evaluates."""

    seeds: int = 3
    candidate_tasks: int = 600
    holdout_tasks: int = 150
    """Validation tasks planned for each holdout (the mismatched one: of kind ``constraint``)."""
    fraction: float = 0.3
    reference_steps: int = 200
    """BC minibatches of the reference policy the candidates are scored from."""
    step_size: float = 0.1
    """Size of the one gradient step a candidate's score takes."""
    bc_steps: int = 1_000
    """BC minibatches (64 pairs) of every training set's policy."""
    eval_episodes: int = 300


DEFAULT = HoldoutBudget()
QUICK = HoldoutBudget(
    seeds=1,
    candidate_tasks=40,
    holdout_tasks=12,
    reference_steps=20,
    bc_steps=100,
    eval_episodes=10,
)


def run(
    out: Path,
    *,
    quick: bool = False,
    seeds: int | None = None,
    seed_list: Sequence[int] | None = None,
    eval_episodes: int | None = None,
    plots: bool = True,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Run the lesson for seeds ``0..seeds-1`` (or the seeds of ``seed_list``); writes ``out/summary.json``, ``out/*.png``, ``out/runs/`` and ``out/data/``; returns the summary."""
    from agentenv.data.selection import select_random, select_top
    from agentenv.lessons.structured.behaviour_cloning import (
        agreement,
        clone,
        demonstrate,
        holdout_gains,
        new_model,
        save_run,
    )
    from agentenv.lessons.structured.training import TrainConfig
    from agentenv.lessons.structured.wrapper import make_structured

    budget = QUICK if quick else DEFAULT
    budget = replace(
        budget,
        **{
            k: v
            for k, v in {"seeds": seeds, "eval_episodes": eval_episodes}.items()
            if v is not None
        },
    )
    seed_values = list(seed_list) if seed_list is not None else list(range(budget.seeds))
    start = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    train_env = make_structured(ENV_ID, split="train", reward=REWARD)
    valid_env = make_structured(ENV_ID, split="validation", reward=REWARD)
    t0 = time.perf_counter()
    candidates = demonstrate(train_env, range(budget.candidate_tasks)).episodes
    matched = demonstrate(valid_env, range(budget.holdout_tasks)).episodes
    valid_tasks = valid_env.unwrapped.tasks
    constraint = [i for i in range(len(valid_tasks)) if valid_tasks[i].kind == MISMATCHED_KIND][
        : budget.holdout_tasks
    ]
    mismatched = demonstrate(valid_env, constraint).episodes
    demo_s = time.perf_counter() - t0
    log(
        f"{NAME}: {len(candidates)} candidate demonstrations, holdouts {len(matched)} matched / {len(mismatched)} "
        f"mismatched, in {demo_s:.0f} s"
    )
    acc: dict[str, dict[int, list[float]]] = {name: {} for name in SETS}
    per_seed: list[dict[str, Any]] = []
    chosen0: dict[str, list[Any]] = {}
    indices = list(range(len(candidates)))
    for seed in seed_values:
        config = TrainConfig(ENV_ID, algo=ALGO, reward=REWARD, seed=seed)
        reference = new_model(config)
        clone(
            reference.policy,
            candidates,
            steps=budget.reference_steps,
            rng=np.random.default_rng(seed),
        )
        t1 = time.perf_counter()
        scores = {
            "matched_holdout": holdout_gains(
                reference.policy, candidates, matched, step_size=budget.step_size
            ),
            "mismatched_holdout": holdout_gains(
                reference.policy, candidates, mismatched, step_size=budget.step_size
            ),
        }
        scoring_s = time.perf_counter() - t1
        picks = {
            "all": indices,
            "random": select_random(indices, budget.fraction, seed=seed),
            **{name: select_top(indices, s, budget.fraction) for name, s in scores.items()},
        }
        if seed == 0:
            chosen0 = {name: [candidates[i] for i in pick] for name, pick in picks.items()}
        row: dict[str, Any] = {"seed": seed, "scoring_wall_s": round(scoring_s, 1)}
        for name, pick in picks.items():
            chosen = [candidates[i] for i in pick]
            model = new_model(config)
            losses = clone(
                model.policy, chosen, steps=budget.bc_steps, rng=np.random.default_rng(seed)
            )
            run_dir = out / "runs" / name / f"seed{seed}"
            save_run(
                model,
                train_env,
                run_dir,
                {
                    "algo": ALGO,
                    "env_id": ENV_ID,
                    "reward": REWARD,
                    "seed": seed,
                    "timesteps": 0,
                    "env_kwargs": {},
                    "behaviour_cloning": {
                        "steps": budget.bc_steps,
                        "demonstrations": len(chosen),
                        "loss": losses,
                    },
                },
            )
            acc[name][seed] = accuracy_of(
                score_policy(run_dir, ENV_ID, REWARD, episodes=budget.eval_episodes, seed=seed)
            )
            row[name] = {
                "rows": len(chosen),
                "rows_by_kind": dict(Counter(d.kind for d in chosen)),
                "bc_loss_first": round(losses[0], 4),
                "bc_loss_last": round(losses[-1], 4),
                "agreement_train": round(agreement(model.policy, chosen), 4),
                "accuracy": round(float(np.mean(acc[name][seed])), 4),
            }
        per_seed.append(row)
        log(
            f"{NAME}: seed {seed}: "
            + ", ".join(f"{n} {row[n]['rows']} rows -> {row[n]['accuracy']:.3f}" for n in SETS)
        )
    t2 = time.perf_counter()
    shift = _shifts(
        {**chosen0, "holdout_matched": matched, "holdout_mismatched": mismatched}, out / "data"
    )
    shift_s = time.perf_counter() - t2
    arms = {name: arm(acc[name]) for name in SETS}
    gains = {
        "mismatched_minus_random": paired_gain_ci(
            pooled(acc["mismatched_holdout"]), pooled(acc["random"])
        ),
        "mismatched_minus_matched": paired_gain_ci(
            pooled(acc["mismatched_holdout"]), pooled(acc["matched_holdout"])
        ),
        "matched_minus_random": paired_gain_ci(
            pooled(acc["matched_holdout"]), pooled(acc["random"])
        ),
        "matched_minus_all": paired_gain_ci(pooled(acc["matched_holdout"]), pooled(acc["all"])),
    }
    hurts = (
        gains["mismatched_minus_random"]["ci"][1] < 0
        and gains["mismatched_minus_matched"]["ci"][1] < 0
    )
    summary: dict[str, Any] = {
        "arms": arms,
        "effects": gains,
        "shift": shift,
        "claim": {
            "statement": "holdout selection hurts when the holdout does not match test",
            "reproduced": bool(hurts),
            "rule": "reproduced when the mismatched selection minus the random 30% and minus the matched "
            "selection both have paired 95% CIs below 0",
        },
        "demonstrations": {
            "candidates": len(candidates),
            "candidate_tasks": budget.candidate_tasks,
            "candidates_by_kind": dict(Counter(d.kind for d in candidates)),
            "holdout_matched": len(matched),
            "holdout_mismatched": len(mismatched),
            "holdout_matched_by_kind": dict(Counter(d.kind for d in matched)),
            "wall_s": round(demo_s, 1),
        },
        "per_seed": per_seed,
        "meta": {
            "lesson": NAME,
            "quick": quick,
            "algo": ALGO,
            "env_id": ENV_ID,
            "reward": REWARD,
            "budget": asdict(budget),
            "seeds": seed_values,
            "mismatched_kind": MISMATCHED_KIND,
            "demonstrator": "menu oracle (hindsight best menu sequence), solved tasks only",
            "holdout_split": "validation",
            "eval_split": "test",
            "shift_check_wall_s": round(shift_s, 1),
            "test_policy": "sampled from the policy with each episode's generator (sb3 agent)",
            "versions": versions(),
        },
    }
    if plots:
        from agentenv.lessons.structured.classic_plots import plot_holdout_selection

        summary["meta"]["plots"] = plot_holdout_selection(summary, out)
    summary["meta"]["wall_s"] = round(time.perf_counter() - start, 1)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def _rows(demos: Sequence[Any]) -> list[dict[str, Any]]:
    return [
        {"prompt": d.prompt, "kind": d.kind, "difficulty": d.difficulty, "task_index": d.task_index}
        for d in demos
    ]


def _shifts(sets: dict[str, Sequence[Any]], data: Path) -> dict[str, dict[str, Any]]:
    """shift-check of each set's task prompts against the test split's tasks; the sets are written as JSONL too."""
    import gymnasium as gym

    from agentenv.data.shift_check import TaskRow, compare_rows

    test = gym.make(ENV_ID, split="test").unwrapped.tasks
    test_rows = [
        TaskRow(test[i].prompt, test[i].kind, test[i].difficulty) for i in range(len(test))
    ]
    data.mkdir(parents=True, exist_ok=True)
    (data / "test_tasks.jsonl").write_text(
        "".join(
            json.dumps({"prompt": r.text, "kind": r.kind, "difficulty": r.difficulty}) + "\n"
            for r in test_rows
        )
    )
    out: dict[str, dict[str, Any]] = {}
    for name, demos in sets.items():
        rows = _rows(demos)
        (data / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        if len(rows) < 10:
            out[name] = {"rows": len(rows), "skipped": "fewer than 10 rows"}
            continue
        report = compare_rows(
            [TaskRow(r["prompt"], r["kind"], r["difficulty"]) for r in rows],
            test_rows,
            name_a=name,
            name_b="test",
            seed=0,
            baseline=False,  # the lesson reads A against B only
        )
        c, m = report.classifier, report.mmd
        out[name] = {
            "rows": len(rows),
            "kind_js": round(report.kind.js_divergence, 4),
            "kind_tv": round(report.kind.total_variation, 4),
            "difficulty_js": round(report.difficulty.js_divergence, 4),
            "classifier_auc": round(c.auc, 4),
            "classifier_ci": [round(c.ci_low, 4), round(c.ci_high, 4)],
            "reading": c.interpretation,
            "mmd2": round(m.mmd2, 5),
            "mmd_p": round(m.p_value, 4),
        }
    return out
