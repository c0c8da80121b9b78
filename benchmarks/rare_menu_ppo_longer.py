"""Masked PPO on ``RareDiseaseDiagnosis-v0`` (strict) with more steps, against the best fixed sequence, on VALIDATION.

    nice -n 10 python benchmarks/rare_menu_ppo_longer.py [--timesteps 15000 60000] [--seeds 0 1 2] [--episodes 815]

Why: the single-vs-multi lesson trains 15k steps per run and its policies
(0.330 on test) stay below the fused macro (0.353). This script asks whether
longer training closes that gap, on the validation split so that nothing is
tuned on test: each policy is trained by the package's own path
(:func:`agentenv.lessons.structured.training.train`, the lesson's defaults but the
timesteps) and plays validation task ``i`` reset with seed ``i``
(deterministic, masked), next to every fixed sequence "tools -> answer"
scored on the same episodes (:func:`agentenv.lessons.structured.fixed_sequences.score_sequences`).
Prints each run's mean with a 95% bootstrap interval, the paired difference
to the best fixed sequence, what the policy played, and wall times.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from pathlib import Path

import gymnasium as gym
import numpy as np

import agentenv  # noqa: F401 - registers the ids
from agentenv.envs.rare_disease.structured.menus import DiagnosisToolsMenu
from agentenv.lessons.structured.fixed_sequences import score_sequences
from agentenv.lessons.structured.rl_extra import algorithm
from agentenv.lessons.structured.training import TrainConfig, train
from agentenv.lessons.structured.wrapper import make_structured

ENV = "RareDiseaseDiagnosis-v0"


def ci(values: np.ndarray, rng: np.random.Generator, n: int = 2000) -> str:
    idx = rng.integers(len(values), size=(n, len(values)))
    means = values[idx].mean(axis=1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    return f"{values.mean():.3f} [{lo:.3f}, {hi:.3f}]"


def play(model_path: Path, episodes: int) -> tuple[np.ndarray, Counter]:
    """Returns of the policy on validation tasks 0..episodes-1 (seed i), and the label sequences it played."""
    model = algorithm("maskable_ppo").load(model_path, device="cpu")
    env = make_structured(ENV, split="validation", reward="strict")
    returns, played = np.zeros(episodes), Counter()
    for i in range(episodes):
        obs, _ = env.reset(seed=i, options={"index": i})
        labels, total = [], 0.0
        while True:
            action, _ = model.predict(obs, deterministic=True, action_masks=env.action_masks())
            obs, reward, terminated, truncated, info = env.step(int(action))
            total += float(reward)
            labels.append(info["structured"]["label"])
            if terminated or truncated:
                break
        returns[i] = total
        played[" -> ".join(labels)] += 1
    env.close()
    return returns, played


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, nargs="+", default=[15_000, 60_000])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--episodes", type=int, default=815)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    env = gym.make(ENV, split="validation", reward="strict")
    episodes = min(args.episodes, len(env.unwrapped.tasks))
    scores = score_sequences(env, DiagnosisToolsMenu, [(i, i) for i in range(episodes)])
    env.close()
    best = scores.best()
    fixed = scores.returns[best]
    print(
        f"validation episodes {episodes}; best fixed sequence {' -> '.join(scores.names(best))}: "
        f"{ci(fixed, rng)}; hindsight {scores.hindsight().mean():.3f}; search {time.perf_counter() - start:.0f} s"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for timesteps in args.timesteps:
            pooled = []
            for seed in args.seeds:
                t0 = time.perf_counter()
                result = train(
                    TrainConfig(ENV, timesteps=timesteps, seed=seed),
                    Path(tmp) / f"t{timesteps}s{seed}",
                )
                returns, played = play(result.model_path, episodes)
                pooled.append(returns)
                top = ", ".join(f"{k} {v}" for k, v in played.most_common(2))
                print(
                    f"  {timesteps} steps, seed {seed}: {ci(returns, rng)}; minus fixed {ci(returns - fixed, rng)}; "
                    f"train {result.wall_s:.0f} s, total {time.perf_counter() - t0:.0f} s; plays {top}",
                    flush=True,
                )
            both = np.concatenate(pooled)
            print(
                f"{timesteps} steps, seeds {args.seeds} pooled: {ci(both, rng)}; "
                f"minus fixed (paired) {ci(both - np.tile(fixed, len(pooled)), rng)}",
                flush=True,
            )
    print(f"wall {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
