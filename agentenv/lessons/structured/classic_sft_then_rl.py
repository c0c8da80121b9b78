"""``agentenv reproduce sft-then-rl-classic``: behaviour cloning, then PPO from the cloned policy, multi- and single-turn.

The workshop's claim: RL after SFT helps, and helps more in multi-turn. Here
on the classic path, on ``MediaSearch-v0`` (multi-turn: search, open, answer)
and ``MediaSearch-SingleTurn-v0`` (single-turn: passages in the prompt), both
under ``strict``:

* **demonstrations**: the menu oracle (:mod:`agentenv.lessons.structured.menu_oracle`)
  on the first ``demo_tasks`` train tasks, played through the structured
  wrapper; solved tasks only. Shared by the seeds.
* **BC**: the PPO lessons' policy network (same builder, seed) trained by
  :func:`agentenv.lessons.structured.behaviour_cloning.clone` for ``bc_steps``
  minibatches.
* **BC + PPO**: PPO for ``timesteps`` steps from the cloned policy, with the
  PPO lessons' settings (:class:`~agentenv.lessons.structured.training.TrainConfig`).
* **PPO**: the same PPO from scratch, the same steps.
* **bm25**, the **best fixed sequence** (every fixed menu sequence scored on
  these test episodes by :mod:`agentenv.lessons.structured.fixed_sequences`, the best
  one, as in the other classic lessons) and the **fixed sequence chosen on
  train** (the best mean over the demonstration tasks' oracle tables), on the
  same test episodes.

Each seed's policies and the baselines play the runner's test episodes for
that seed (seeds 0..N-1, or the ``--seed-list``). The claim is marked reproduced when BC + PPO beats
BC on the multi-turn id (paired 95% CI above 0) and that gain exceeds the
single-turn one (95% CI of the difference above 0). The budgets were set
before any test run; nothing was tuned on test.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from agentenv.lessons.structured.classic_common import (
    accuracy_of,
    arm,
    best_sequence,
    gain_difference_ci,
    paired_gain_ci,
    pooled,
    score_agent,
    score_policy,
    score_sequence,
    versions,
)

NAME = "sft-then-rl-classic"
IDS = {"multi_turn": "MediaSearch-v0", "single_turn": "MediaSearch-SingleTurn-v0"}
REWARD = "strict"
ALGO = "ppo"
"""Plain PPO, the algorithm of the committed PPO lessons: every menu entry may be sampled (no action masks)."""
ARMS = ("bc", "bc_ppo", "ppo")


@dataclass(frozen=True)
class SFTBudget:
    """How much the lesson demonstrates, clones, trains and evaluates."""

    seeds: int = 3
    demo_tasks: int = 400
    """Train tasks the menu oracle plans (the first ones of the train split; PPO draws from the first ``train_tasks``)."""
    bc_steps: int = 1_500
    """Minibatches (64 pairs) of behaviour cloning."""
    timesteps: int = 15_000
    """PPO steps, from the cloned policy and from scratch (the single-vs-multi lesson's budget)."""
    eval_episodes: int = 300
    """Test episodes per seed for every arm."""
    train_tasks: int = 2_000


DEFAULT = SFTBudget()
QUICK = SFTBudget(
    seeds=1, demo_tasks=24, bc_steps=200, timesteps=256, eval_episodes=8, train_tasks=100
)


def run(
    out: Path,
    *,
    quick: bool = False,
    seeds: int | None = None,
    seed_list: Sequence[int] | None = None,
    eval_episodes: int | None = None,
    timesteps: int | None = None,
    plots: bool = True,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Run the lesson for seeds ``0..seeds-1`` (or the seeds of ``seed_list``); writes ``out/summary.json``, ``out/*.png`` and ``out/runs/``; returns the summary."""
    from agentenv.lessons.structured.behaviour_cloning import (
        agreement,
        clone,
        demonstrate,
        new_model,
        save_run,
    )
    from agentenv.lessons.structured.fixed_sequences import best_fixed_sequence
    from agentenv.lessons.structured.training import TrainConfig, train
    from agentenv.lessons.structured.wrapper import make_structured

    budget = QUICK if quick else DEFAULT
    budget = replace(
        budget,
        **{
            k: v
            for k, v in {
                "seeds": seeds,
                "eval_episodes": eval_episodes,
                "timesteps": timesteps,
            }.items()
            if v is not None
        },
    )
    seed_values = list(seed_list) if seed_list is not None else list(range(budget.seeds))
    start = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {}
    curves: dict[str, dict[str, list[Any]]] = {}
    for key, env_id in IDS.items():
        t0 = time.perf_counter()
        env = make_structured(env_id, split="train", reward=REWARD)
        demos = demonstrate(env, range(budget.demo_tasks))
        demo_s = time.perf_counter() - t0
        sequence, train_mean = best_sequence(demos.tables)
        labels = [env.menu.labels[a] for a in sequence]
        log(
            f"{NAME}: {env_id}: {len(demos.episodes)} demonstrations ({demos.pairs} pairs) from {demos.tasks} "
            f"train tasks in {demo_s:.0f} s; best fixed sequence on train {labels} ({train_mean:.3f})"
        )
        acc: dict[str, dict[int, list[float]]] = {
            a: {} for a in (*ARMS, "bm25", "fixed_sequence_chosen_on_train")
        }
        per_seed: list[dict[str, Any]] = []
        curves[key] = {"bc_ppo": [], "ppo": [], "bc_loss": []}
        for seed in seed_values:
            config = TrainConfig(
                env_id,
                algo=ALGO,
                reward=REWARD,
                timesteps=budget.timesteps,
                seed=seed,
                train_tasks=budget.train_tasks,
            )
            runs = out / "runs" / key
            t1 = time.perf_counter()
            model = new_model(config)
            losses = clone(
                model.policy, demos.episodes, steps=budget.bc_steps, rng=np.random.default_rng(seed)
            )
            agree = agreement(model.policy, demos.episodes)
            save_run(
                model,
                env,
                runs / "bc" / f"seed{seed}",
                {
                    "algo": ALGO,
                    "env_id": env_id,
                    "reward": REWARD,
                    "seed": seed,
                    "timesteps": 0,
                    "env_kwargs": {},
                    "behaviour_cloning": {
                        "steps": budget.bc_steps,
                        "demonstrations": len(demos.episodes),
                        "loss": losses,
                    },
                },
            )
            bc_s = time.perf_counter() - t1
            bc_ppo = train(
                replace(config, init_from=str(runs / "bc" / f"seed{seed}")),
                runs / "bc_ppo" / f"seed{seed}",
            )
            ppo = train(config, runs / "ppo" / f"seed{seed}")
            curves[key]["bc_ppo"].append(bc_ppo.curve)
            curves[key]["ppo"].append(ppo.curve)
            curves[key]["bc_loss"].append(losses)
            for name in ARMS:
                records = score_policy(
                    runs / name / f"seed{seed}",
                    env_id,
                    REWARD,
                    episodes=budget.eval_episodes,
                    seed=seed,
                )
                acc[name][seed] = accuracy_of(records)
            acc["bm25"][seed] = accuracy_of(
                score_agent("bm25", env_id, REWARD, episodes=budget.eval_episodes, seed=seed)
            )
            acc["fixed_sequence_chosen_on_train"][seed] = accuracy_of(
                score_sequence(env_id, REWARD, sequence, episodes=budget.eval_episodes, seed=seed)
            )
            per_seed.append(
                {
                    "seed": seed,
                    "bc_loss_first": round(losses[0], 4),
                    "bc_loss_last": round(losses[-1], 4),
                    "bc_agreement_train": round(agree, 4),
                    "bc_wall_s": round(bc_s, 1),
                    "bc_ppo_train_wall_s": round(bc_ppo.wall_s, 1),
                    "ppo_train_wall_s": round(ppo.wall_s, 1),
                    **{f"{a}_accuracy": round(float(np.mean(acc[a][seed])), 4) for a in acc},
                }
            )
            log(
                f"{NAME}: {key} seed {seed}: BC loss {losses[0]:.3f} -> {losses[-1]:.3f}, agreement {agree:.3f}; "
                + ", ".join(f"{a} {np.mean(acc[a][seed]):.3f}" for a in acc)
            )
        t3 = time.perf_counter()
        fixed_scores, fixed_arm = best_fixed_sequence(
            env_id, REWARD, {}, episodes=budget.eval_episodes, seeds=seed_values
        )
        fixed = np.asarray(fixed_scores.accuracy[fixed_scores.best()], dtype=np.float64)
        acc["best_fixed_sequence"] = {
            s: fixed[i * budget.eval_episodes : (i + 1) * budget.eval_episodes].tolist()
            for i, s in enumerate(seed_values)
        }
        for row in per_seed:
            row["best_fixed_sequence_accuracy"] = round(
                float(np.mean(acc["best_fixed_sequence"][row["seed"]])), 4
            )
        log(
            f"{NAME}: {key}: best fixed sequence on the test episodes {fixed_arm['sequence']}: "
            f"{np.mean(fixed):.3f} ({time.perf_counter() - t3:.0f} s)"
        )
        summary[key] = {
            "env_id": env_id,
            "reward": REWARD,
            **{a: arm(acc[a]) for a in ARMS},
            "bm25": arm(acc["bm25"]),
            "best_fixed_sequence": arm(
                acc["best_fixed_sequence"],
                sequence=fixed_arm["sequence"],
                chosen_on="these test episodes (agentenv.lessons.structured.fixed_sequences)",
                search=fixed_arm["search"],
                hindsight_best_per_episode=fixed_arm["hindsight_best_per_episode"],
            ),
            "fixed_sequence_chosen_on_train": arm(
                acc["fixed_sequence_chosen_on_train"],
                sequence=labels,
                actions=list(sequence),
                chosen_on="train (the demonstration tasks' oracle tables)",
                train_accuracy=round(train_mean, 4),
            ),
            "rl_gain_over_bc": paired_gain_ci(pooled(acc["bc_ppo"]), pooled(acc["bc"])),
            "bc_ppo_minus_ppo": paired_gain_ci(pooled(acc["bc_ppo"]), pooled(acc["ppo"])),
            "bc_ppo_minus_best_fixed": paired_gain_ci(
                pooled(acc["bc_ppo"]), pooled(acc["best_fixed_sequence"])
            ),
            "demonstrations": {
                "tasks": demos.tasks,
                "solved": len(demos.episodes),
                "pairs": demos.pairs,
                "planned_solved": demos.planned_solved,
                "oracle_train_accuracy": demos.replayed_reward,
                "wall_s": round(demo_s, 1),
            },
            "per_seed": per_seed,
            "_acc": acc,
        }
    summary["claim"] = _claim(summary)
    for key in IDS:
        summary[key].pop("_acc")
    summary["meta"] = {
        "lesson": NAME,
        "quick": quick,
        "algo": ALGO,
        "budget": asdict(budget),
        "seeds": seed_values,
        "demonstrator": "menu oracle (hindsight best menu sequence, beam: up to 2 distinct tool entries then an "
        "answer entry), solved train tasks only",
        "test_policy": "sampled from the policy with each episode's generator (sb3 agent, deterministic=false)",
        "train_split": "train",
        "eval_split": "test",
        "versions": versions(),
    }
    if plots:
        from agentenv.lessons.structured.classic_plots import plot_sft_then_rl

        summary["meta"]["plots"] = plot_sft_then_rl(summary, curves, out, budget.timesteps)
    summary["meta"]["wall_s"] = round(time.perf_counter() - start, 1)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def _claim(summary: dict[str, Any]) -> dict[str, Any]:
    """Whether "RL after SFT helps, more in multi-turn" holds: the gains, their difference and the verdict."""
    multi, single = summary["multi_turn"]["_acc"], summary["single_turn"]["_acc"]
    gain_multi = summary["multi_turn"]["rl_gain_over_bc"]
    gain_single = summary["single_turn"]["rl_gain_over_bc"]
    difference = gain_difference_ci(
        pooled(multi["bc_ppo"]), pooled(multi["bc"]), pooled(single["bc_ppo"]), pooled(single["bc"])
    )
    helps = gain_multi["ci"][0] > 0
    more = difference["ci"][0] > 0
    return {
        "statement": "RL after SFT helps, more in multi-turn",
        "rl_gain_multi_turn": gain_multi,
        "rl_gain_single_turn": gain_single,
        "multi_minus_single_gain": difference,
        "helps_multi_turn": helps,
        "helps_more_in_multi_turn": more,
        "reproduced": bool(helps and more),
        "rule": "reproduced when BC+PPO minus BC on MediaSearch-v0 has a paired 95% CI above 0 and that gain "
        "minus the single-turn gain has a 95% CI above 0",
    }
