"""Train a Stable-Baselines3 policy on a structured env: seeded vector envs, CSV/JSON logs, a loadable model.

A run directory holds:

* ``model.zip``: the SB3 model;
* ``model.json``: what the ``sb3`` eval agent needs to rebuild the policy's
  view (menu name, algorithm, max turns, feature and action names) and how
  it was trained (env id, reward, seed, budget);
* ``episodes.csv``: one row per training episode (timestep, return,
  accuracy, tool calls, predictions, answered items), the learning curve;
* ``train.json``: the config and wall time.

Training always uses the ``train`` split (``split`` in ``env_kwargs`` is
refused): evaluation on validation or test goes through ``agentenv eval
--agent sb3`` (:mod:`agentenv.lessons.structured.sb3_agent`).
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from agentenv.errors import UserInputError
from agentenv.lessons.structured.budget_end import BudgetEndsEpisode
from agentenv.lessons.structured.rl_extra import ALGORITHMS, algorithm, sb3
from agentenv.lessons.structured.task_pool import TaskPool
from agentenv.lessons.structured.wrapper import StructuredEnv

CURVE_FIELDS = (
    "timestep",
    "episode",
    "return",
    "accuracy",
    "hit_any",
    "tool_calls",
    "turns",
    "n_predictions",
    "n_answered",
    "answered",
)


@dataclass
class TrainConfig:
    """One training run. Defaults are the ones the lessons use unless they say otherwise."""

    env_id: str
    algo: str = "maskable_ppo"
    """``maskable_ppo`` (sb3-contrib: only the entries the menu allows are sampled), ``ppo``, ``a2c`` or ``dqn``."""
    reward: Any = "strict"
    """A preset name, or a reward dict (``agentenv.rewards.config.resolve_reward``)."""
    timesteps: int = 20_000
    seed: int = 0
    n_envs: int = 4
    train_tasks: int = 2_000
    """Train-split tasks drawn from (:class:`~agentenv.lessons.structured.task_pool.TaskPool`); 0 for all."""
    learning_rate: float = 1e-3
    n_steps: int = 64
    """PPO/A2C rollout length per env."""
    batch_size: int = 64
    n_epochs: int = 4
    ent_coef: float = 0.01
    gamma: float = 1.0
    """Episodes are a few turns long and end for sure; 1.0 leaves every cost to the reward, none to discounting."""
    net: tuple[int, ...] = (64, 64)
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    init_from: str | None = None
    """A run directory (or its ``model.zip``) to continue from, e.g. a warm start shared by two rewards;
    its algorithm and hyperparameters are kept, the env and seed are this config's."""

    def __post_init__(self) -> None:
        if "split" in self.env_kwargs:
            raise UserInputError(
                "env_kwargs: 'split' is not allowed; training uses the train split "
                "(evaluate on validation/test with agentenv eval --agent sb3)"
            )
        if self.algo not in ALGORITHMS:
            raise UserInputError(f"algo must be one of {list(ALGORITHMS)}, got {self.algo!r}")
        for name in ("timesteps", "n_envs", "n_steps", "batch_size", "n_epochs"):
            if int(getattr(self, name)) < 1:
                raise UserInputError(f"{name} must be >= 1, got {getattr(self, name)}")


@dataclass
class TrainResult:
    """Where a run wrote its files, its learning curve and its wall time."""

    out: Path
    curve: list[dict[str, float]]
    wall_s: float

    @property
    def model_path(self) -> Path:
        return self.out / "model.zip"


def make_train_env(config: TrainConfig, index: int = 0) -> gym.Env:
    """One training env: the text env on the train split, the menu wrapper, the task pool, and the turn
    budget as a terminal state (:class:`~agentenv.lessons.structured.budget_end.BudgetEndsEpisode`)."""
    import agentenv  # noqa: F401 - registers the ids

    env = gym.make(config.env_id, split="train", reward=config.reward, **dict(config.env_kwargs))
    return BudgetEndsEpisode(TaskPool(StructuredEnv(env), config.train_tasks, index, config.n_envs))


def _episode_logger(n_envs: int) -> Any:
    """An SB3 callback that turns each finished episode's final ``info`` into a curve row."""
    base = sb3().common.callbacks.BaseCallback

    class EpisodeLog(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.rows: list[dict[str, float]] = []
            self.returns = np.zeros(n_envs)

        def _on_step(self) -> bool:
            self.returns += np.asarray(self.locals["rewards"], dtype=np.float64)
            for i, done in enumerate(self.locals["dones"]):
                if not done:
                    continue
                info = self.locals["infos"][i]
                comps = info.get("reward_components") or {}
                last = info.get("structured") or {}
                self.rows.append(
                    {
                        "timestep": float(self.num_timesteps),
                        "episode": float(len(self.rows)),
                        "return": float(self.returns[i]),
                        "accuracy": float(comps.get("accuracy", 0.0)),
                        "hit_any": float(comps.get("hit@any", comps.get("accuracy", 0.0))),
                        "tool_calls": float(comps.get("tool_calls", info.get("tool_calls", 0))),
                        "turns": float(comps.get("turns", info.get("turn", 0))),
                        "n_predictions": float(
                            comps.get("n_predictions", last.get("n_answered", 0))
                        ),
                        "n_answered": float(last.get("n_answered", 0)),
                        "answered": 1.0 if last.get("kind") == "answer" else 0.0,
                    }
                )
                self.returns[i] = 0.0
            return True

    return EpisodeLog()


def algo_kwargs(config: TrainConfig) -> dict[str, Any]:
    policy_kwargs = {"net_arch": list(config.net)}
    common: dict[str, Any] = {
        "learning_rate": config.learning_rate,
        "gamma": config.gamma,
        "seed": config.seed,
        "policy_kwargs": policy_kwargs,
        "device": "cpu",
        "verbose": 0,
    }
    if config.algo in ("ppo", "maskable_ppo"):
        return {
            **common,
            "n_steps": config.n_steps,
            "batch_size": config.batch_size,
            "n_epochs": config.n_epochs,
            "ent_coef": config.ent_coef,
        }
    if config.algo == "a2c":
        return {**common, "n_steps": max(config.n_steps // 8, 5), "ent_coef": config.ent_coef}
    return {
        **common,
        "buffer_size": 50_000,
        "learning_starts": 500,
        "batch_size": config.batch_size,
        "train_freq": 1,
        "target_update_interval": 500,
        "exploration_fraction": 0.3,
        "exploration_final_eps": 0.05,
    }


def _structured(env: gym.Env) -> StructuredEnv:
    """The :class:`StructuredEnv` inside a training env's wrapper stack."""
    while not isinstance(env, StructuredEnv):
        env = env.env
    return env


def train(config: TrainConfig, out: Path) -> TrainResult:
    """Train one policy and write ``out/{model.zip, model.json, episodes.csv, train.json}``."""
    module = sb3()
    algo_cls = algorithm(config.algo)
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    vec = module.common.vec_env.DummyVecEnv(
        [lambda i=i: make_train_env(config, i) for i in range(config.n_envs)]
    )
    vec.seed(config.seed)
    if config.init_from:
        start_path = Path(config.init_from)
        start_path = start_path if start_path.suffix == ".zip" else start_path / "model.zip"
        if not start_path.is_file():
            raise UserInputError(
                f"init_from={config.init_from}: {start_path} not found; give a run directory"
            )
        model = algo_cls.load(start_path, env=vec, device="cpu")
        model.set_random_seed(config.seed)
    else:
        model = algo_cls("MlpPolicy", vec, **algo_kwargs(config))
    # A logger with no outputs: SB3's default one makes an empty tempdir/SB3-<time> folder per run.
    from stable_baselines3.common.logger import Logger

    model.set_logger(Logger(folder=None, output_formats=[]))
    logger = _episode_logger(config.n_envs)
    model.learn(total_timesteps=config.timesteps, callback=logger, progress_bar=False)
    model.save(out / "model.zip")
    probe = _structured(vec.envs[0])
    meta = {
        "format": 1,
        "algo": config.algo,
        "menu": probe.menu.name,
        "family": probe.family,
        "max_turns": probe.max_turns,
        "feature_names": list(probe.menu.feature_names),
        "labels": list(probe.menu.labels),
        "env_id": config.env_id,
        "reward": config.reward,
        "seed": config.seed,
        "timesteps": config.timesteps,
        "env_kwargs": dict(config.env_kwargs),
    }
    (out / "model.json").write_text(json.dumps(meta, indent=2) + "\n")
    vec.close()
    wall = time.perf_counter() - start
    with (out / "episodes.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=CURVE_FIELDS)
        writer.writeheader()
        writer.writerows(logger.rows)
    record = {
        **asdict(config),
        "net": list(config.net),
        "env_kwargs": dict(config.env_kwargs),
        "wall_s": round(wall, 2),
        "episodes": len(logger.rows),
    }
    (out / "train.json").write_text(json.dumps(record, indent=2) + "\n")
    return TrainResult(out, logger.rows, wall)
