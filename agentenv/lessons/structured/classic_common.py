"""What the two behaviour-cloning lessons share: scoring on the harness's test episodes, arms with CIs, run dirs.

Every arm of a lesson is scored on the same test episodes: episode ``i`` of
seed ``s`` is the task :func:`agentenv.evaluation.runner.episode_plan` gives
the runner for ``(s, i)``, so a trained policy (``sb3`` agent), the ``bm25``
agent and a fixed menu sequence meet the same tasks seed by seed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agentenv.lessons.structured.stats import mean_ci


def accuracy_of(records: Sequence[Mapping[str, Any]]) -> list[float]:
    """The ``accuracy`` component of each test episode record."""
    return [float(r["components"].get("accuracy", 0.0)) for r in records]


def score_policy(
    run_dir: Path, env_id: str, reward: Any, *, episodes: int, seed: int
) -> list[dict[str, Any]]:
    """Test episode records of a saved policy through the evaluation runner (``agentenv eval --agent sb3``)."""
    from agentenv.lessons.structured.lessons import ensure_sb3_agent, score

    ensure_sb3_agent()
    return score(
        "sb3", env_id, reward, {}, episodes=episodes, seed=seed, agent_args={"path": str(run_dir)}
    )


def score_agent(
    agent: str, env_id: str, reward: Any, *, episodes: int, seed: int
) -> list[dict[str, Any]]:
    """Test episode records of a registered agent (``bm25``, ``random``) through the evaluation runner."""
    from agentenv.lessons.structured.lessons import score

    return score(agent, env_id, reward, {}, episodes=episodes, seed=seed)


def best_sequence(
    tables: Sequence[Mapping[tuple[int, ...], float]],
) -> tuple[tuple[int, ...], float]:
    """The menu sequence with the highest mean reward over the tasks' tables (then the shortest, then the first).

    >>> best_sequence([{(0,): 1.0, (1,): 0.0, (2, 0): 1.0}, {(0,): 0.0, (1,): 1.0, (2, 0): 1.0}])
    ((2, 0), 1.0)
    """
    keys = list(tables[0])
    means = {k: float(np.mean([t[k] for t in tables])) for k in keys}
    best = min(keys, key=lambda k: (-means[k], len(k), k))
    return best, means[best]


def score_sequence(
    env_id: str, reward: Any, actions: Sequence[int], *, episodes: int, seed: int
) -> list[dict[str, Any]]:
    """Records (``components.accuracy``) of playing ``actions`` on the runner's test episodes for ``seed``."""
    from agentenv.evaluation.runner import episode_plan
    from agentenv.lessons.structured.wrapper import make_structured

    env = make_structured(env_id, split="test", reward=reward)
    plan = episode_plan(len(env.unwrapped.tasks), episodes, seed)
    records = []
    for episode, task_index in enumerate(plan):
        env.reset(seed=seed + episode, options={"index": task_index})
        components: Mapping[str, Any] = {}
        for action in actions:
            _, _, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                components = info.get("reward_components") or {}
                break
        records.append(
            {
                "task_index": task_index,
                "components": {"accuracy": float(components.get("accuracy", 0.0))},
            }
        )
    env.close()
    return records


def arm(per_seed: Mapping[int, Sequence[float]], **extra: Any) -> dict[str, Any]:
    """An arm of a summary: pooled ``accuracy`` and its 95% bootstrap ``ci``, ``n``, and each seed's mean."""
    pooled = [v for s in sorted(per_seed) for v in per_seed[s]]
    m = mean_ci(pooled, seed=0)
    return {
        "accuracy": m["mean"],
        "ci": m["ci"],
        "n": m["n"],
        "per_seed": {str(s): round(float(np.mean(v)), 4) for s, v in sorted(per_seed.items())},
        **extra,
    }


def pooled(per_seed: Mapping[int, Sequence[float]]) -> list[float]:
    """Values of every seed, in seed order."""
    return [v for s in sorted(per_seed) for v in per_seed[s]]


def paired_gain_ci(
    a: Sequence[float], b: Sequence[float], *, seed: int = 0, resamples: int = 2000
) -> dict[str, Any]:
    """Mean of ``a - b`` over the same episodes with a 95% paired bootstrap interval.

    >>> paired_gain_ci([1, 1, 0, 1], [0, 1, 0, 0])["mean"]
    0.5
    """
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, d.size, size=(resamples, d.size))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return {"mean": round(float(d.mean()), 4), "ci": [round(float(low), 4), round(float(high), 4)]}


def gain_difference_ci(
    a1: Sequence[float],
    b1: Sequence[float],
    a2: Sequence[float],
    b2: Sequence[float],
    *,
    seed: int = 0,
    resamples: int = 2000,
) -> dict[str, Any]:
    """``mean(a1 - b1) - mean(a2 - b2)`` (two paired gains on different envs) with a 95% bootstrap interval.

    >>> gain_difference_ci([1, 1], [0, 0], [1, 0], [1, 0])["mean"]
    1.0
    """
    d1 = np.asarray(a1, dtype=np.float64) - np.asarray(b1, dtype=np.float64)
    d2 = np.asarray(a2, dtype=np.float64) - np.asarray(b2, dtype=np.float64)
    rng = np.random.default_rng(seed)
    m1 = d1[rng.integers(0, d1.size, size=(resamples, d1.size))].mean(axis=1)
    m2 = d2[rng.integers(0, d2.size, size=(resamples, d2.size))].mean(axis=1)
    low, high = np.quantile(m1 - m2, [0.025, 0.975])
    return {
        "mean": round(float(d1.mean() - d2.mean()), 4),
        "ci": [round(float(low), 4), round(float(high), 4)],
    }


def versions() -> dict[str, str]:
    """Library versions and the git commit of the code that produced a summary."""
    import subprocess

    out: dict[str, str] = {}
    try:
        import stable_baselines3
        import torch

        out.update({"stable_baselines3": stable_baselines3.__version__, "torch": torch.__version__})
    except ImportError:
        pass
    try:
        root = Path(__file__).resolve().parents[3]
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", "agentenv", "envs"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        ).stdout.strip()
        if commit:
            out["commit"] = commit + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return out
