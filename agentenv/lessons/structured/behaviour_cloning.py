"""Behaviour cloning on the PPO lessons' own policy network: demonstrations, the loss, training, agreement.

Why written here: the maintained imitation libraries cannot install beside the
package (``imitation`` 1.0.1 pins gymnasium ~=0.29 and stable-baselines3
~=2.2; ``d3rlpy`` 2.8.1 pins gymnasium ==1.0.0), and what the lessons need is
small: the cross-entropy of the demonstrated menu action under the SB3
policy's own action distribution (``policy.evaluate_actions``), minimised
with Adam on shuffled minibatches. The policy is built exactly as
:func:`agentenv.lessons.structured.training.train` builds it, so a cloned policy is
saved as a run directory that ``agentenv eval --agent sb3`` plays and that
PPO continues from (``TrainConfig(init_from=...)``).

* :func:`demonstrate` plays each task's :class:`~agentenv.lessons.structured.menu_oracle.MenuOracle`
  plan through the :class:`~agentenv.lessons.structured.wrapper.StructuredEnv`
  wrapper and records (features, menu action) pairs and the reward the env
  paid; only solved tasks become demonstrations (a failed sequence teaches
  nothing to copy).
* :func:`clone` trains the policy; only the actor's loss is used, so the value
  head keeps its initialisation and PPO fits it from its own returns.
* :func:`agreement` is the share of states where the policy's most likely
  action is the demonstrated one.
* :func:`holdout_gains` scores each demonstration by how much one gradient
  step on it lowers the loss on a holdout set (the holdout-selection lesson).

All randomness comes from a ``numpy.random.Generator`` (minibatch order) and
the seed of the SB3 model (initial weights).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agentenv.lessons.structured.menu_oracle import MenuOracle
from agentenv.lessons.structured.wrapper import StructuredEnv


@dataclass(frozen=True)
class Demonstration:
    """One solved episode of the demonstrator: its task, the features it saw and the menu actions it took."""

    task_index: int
    prompt: str
    kind: str | None
    difficulty: str | None
    observations: np.ndarray
    actions: np.ndarray
    reward: float


@dataclass
class Demonstrations:
    """What :func:`demonstrate` returns: the solved episodes, and the counts and sequence table behind them."""

    episodes: list[Demonstration]
    tasks: int
    """Tasks planned."""
    planned_solved: int
    """Tasks whose best sequence the grader accepted in the search."""
    replayed_reward: float
    """Mean reward the wrapper paid when the plans were played (unsolved plans count as 0)."""
    tables: list[dict[tuple[int, ...], float]] = field(default_factory=list)
    """Per task: the graded reward of every sequence searched (the best fixed sequence is read from these)."""

    @property
    def pairs(self) -> int:
        return int(sum(len(d.actions) for d in self.episodes))


def demonstrate(
    env: StructuredEnv,
    task_indices: Sequence[int],
    *,
    max_tools: int = 2,
    progress: Callable[[int], None] | None = None,
) -> Demonstrations:
    """Plan each task with the menu oracle, play the plan through ``env`` and keep the solved episodes."""
    oracle = MenuOracle(env, max_tools=max_tools)
    tasks = env.unwrapped.tasks
    episodes: list[Demonstration] = []
    tables: list[dict[tuple[int, ...], float]] = []
    planned = 0
    paid = 0.0
    for n, index in enumerate(task_indices):
        plan = oracle.plan(int(index))
        tables.append(dict(plan.table))
        if plan.reward <= 0:
            continue
        planned += 1
        obs, _ = env.reset(options={"index": int(index)})
        seen, reward = [], 0.0
        for action in plan.actions:
            seen.append(np.asarray(obs, dtype=np.float32))
            obs, reward, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                break
        paid += float(reward)
        if reward > 0 and len(seen) == len(plan.actions):
            task = tasks[int(index)]
            episodes.append(
                Demonstration(
                    int(index),
                    task.prompt,
                    task.kind,
                    task.difficulty,
                    np.stack(seen),
                    np.asarray(plan.actions, dtype=np.int64),
                    float(reward),
                )
            )
        if progress is not None:
            progress(n + 1)
    count = max(len(task_indices), 1)
    return Demonstrations(episodes, len(task_indices), planned, round(paid / count, 4), tables)


def stacked(episodes: Sequence[Demonstration]) -> tuple[np.ndarray, np.ndarray]:
    """All (features, action) pairs of the episodes as two arrays."""
    if not episodes:
        raise ValueError("no demonstrations to train on")
    return (
        np.concatenate([d.observations for d in episodes]).astype(np.float32),
        np.concatenate([d.actions for d in episodes]).astype(np.int64),
    )


def bc_loss(policy: Any, observations: Any, actions: Any) -> Any:
    """Mean cross-entropy of the demonstrated actions under the policy's action distribution (a torch scalar)."""
    _, log_prob, _ = policy.evaluate_actions(observations, actions)
    return -log_prob.mean()


def dataset_loss(policy: Any, episodes: Sequence[Demonstration]) -> float:
    """:func:`bc_loss` over every pair of ``episodes``, without gradients."""
    import torch

    obs, actions = stacked(episodes)
    with torch.no_grad():
        return float(bc_loss(policy, torch.as_tensor(obs), torch.as_tensor(actions)))


def clone(
    policy: Any,
    episodes: Sequence[Demonstration],
    *,
    steps: int,
    rng: np.random.Generator,
    batch_size: int = 64,
    learning_rate: float = 1e-3,
) -> list[float]:
    """Train ``policy`` in place for ``steps`` minibatch steps; returns the whole-dataset loss every 10% of the steps
    (first entry: before training)."""
    import torch

    obs, actions = stacked(episodes)
    obs_t, act_t = torch.as_tensor(obs), torch.as_tensor(actions)
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    policy.set_training_mode(True)
    every = max(steps // 10, 1)
    losses = [dataset_loss(policy, episodes)]
    order = rng.permutation(len(actions))
    cursor = 0
    for step in range(steps):
        if cursor + batch_size > len(order):
            order, cursor = rng.permutation(len(actions)), 0
        batch = torch.as_tensor(order[cursor : cursor + batch_size])
        cursor += batch_size
        loss = bc_loss(policy, obs_t[batch], act_t[batch])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if (step + 1) % every == 0:
            losses.append(dataset_loss(policy, episodes))
    policy.set_training_mode(False)
    return losses


def agreement(policy: Any, episodes: Sequence[Demonstration]) -> float:
    """Share of demonstrated states where the policy's most likely action is the demonstrator's."""
    import torch

    obs, actions = stacked(episodes)
    with torch.no_grad():
        probs = policy.get_distribution(torch.as_tensor(obs)).distribution.probs.numpy()
    return float(np.mean(probs.argmax(axis=1) == actions))


def holdout_gains(
    policy: Any,
    candidates: Sequence[Demonstration],
    holdout: Sequence[Demonstration],
    *,
    step_size: float = 0.1,
) -> np.ndarray:
    """Per candidate: holdout loss before minus after one gradient step (size ``step_size``) on that candidate alone.

    Higher means the candidate teaches what the holdout needs. The step is taken on a copy of the
    parameters (``torch.func.functional_call``), so ``policy`` is unchanged.
    """
    import torch
    from torch.func import functional_call

    module = _loss_module(policy)
    params = {name: p.detach() for name, p in module.named_parameters()}
    h_obs, h_act = (torch.as_tensor(a) for a in stacked(holdout))
    with torch.no_grad():
        before = float(functional_call(module, params, (h_obs, h_act)))
    gains = np.zeros(len(candidates))
    for i, demo in enumerate(candidates):
        weights = {k: v.clone().requires_grad_(True) for k, v in params.items()}
        loss = functional_call(
            module, weights, (torch.as_tensor(demo.observations), torch.as_tensor(demo.actions))
        )
        grads = torch.autograd.grad(loss, list(weights.values()), allow_unused=True)
        stepped = {
            k: w.detach() if g is None else (w - step_size * g).detach()
            for (k, w), g in zip(weights.items(), grads, strict=True)
        }
        with torch.no_grad():
            gains[i] = before - float(functional_call(module, stepped, (h_obs, h_act)))
    return gains


def _loss_module(policy: Any) -> Any:
    """A torch module whose forward is :func:`bc_loss` of ``policy`` (``functional_call`` swaps its parameters)."""
    import torch

    class BCLoss(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.policy = policy

        def forward(self, obs: Any, actions: Any) -> Any:
            return bc_loss(self.policy, obs, actions)

    return BCLoss()


def new_model(config: Any) -> Any:
    """An untrained SB3 model built exactly as :func:`~agentenv.lessons.structured.training.train` builds it for ``config``
    (a :class:`~agentenv.lessons.structured.training.TrainConfig`): same policy network, hyperparameters and seed."""
    from agentenv.lessons.structured.rl_extra import algorithm, sb3
    from agentenv.lessons.structured.training import algo_kwargs, make_train_env

    vec = sb3().common.vec_env.DummyVecEnv([lambda: make_train_env(config, 0)])
    model = algorithm(config.algo)("MlpPolicy", vec, **algo_kwargs(config))
    vec.close()
    return model


def save_run(model: Any, env: StructuredEnv, out: Path, meta: dict[str, Any]) -> Path:
    """Write ``out/model.zip`` and the ``model.json`` the sb3 agent reads (same fields as training writes)."""
    out.mkdir(parents=True, exist_ok=True)
    model.save(out / "model.zip")
    record = {
        "format": 1,
        "algo": "ppo",
        "menu": env.menu.name,
        "family": env.family,
        "max_turns": env.max_turns,
        "feature_names": list(env.menu.feature_names),
        "labels": list(env.menu.labels),
        **meta,
    }
    (out / "model.json").write_text(json.dumps(record, indent=2) + "\n")
    return out
