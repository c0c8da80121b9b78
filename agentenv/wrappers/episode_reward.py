"""The base of the reward wrappers: change the last step's reward from the episode's components.

Why not ``gymnasium.RewardWrapper``: its ``reward(reward)`` hook never sees
``info``, and every change here depends on the episode's components, which
live in ``info["reward_components"]``. So the base keeps a thin ``step``
override that calls one hook, :meth:`EpisodeRewardWrapper.reward`, with the
reward, the components, and whether the episode ended with an answer, on the
step that ends the episode (when the components are filled). What the hook changed is recorded in a *new* dict of
components (the inner env's dict is never mutated), so a log shows both the
original components and every wrapper's contribution.

Example:
    >>> import gymnasium as gym
    >>> from agentenv.wrappers import FormatBonus, TurnCost
    >>> FormatBonus(TurnCost(gym.Env(), cost=0.02), bonus=0.1)
    <FormatBonus(bonus=0.1)<TurnCost(cost=0.02)<Env instance>>>
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar, SupportsFloat

import gymnasium as gym


class EpisodeRewardWrapper(gym.Wrapper[str, str, str, str], gym.utils.RecordConstructorArgs):
    """Calls :meth:`reward` once per episode, on the step whose ``info`` holds the components.

    Subclasses call ``super().__init__(env, **params)``; the params are
    recorded in ``env.spec`` (so ``gym.make(env.spec)`` rebuilds the stack)
    and shown in ``repr(env)``.
    """

    def __init__(self, env: gym.Env[str, str], **params: Any) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, **params)
        gym.Wrapper.__init__(self, env)
        self.params = params

    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        components = info.get("reward_components")
        if (terminated or truncated) and components:
            answered = terminated and "parse_error" not in info
            reward, changes = self.reward(float(reward), components, answered=answered)
            info = {**info, "reward_components": {**components, **changes}}
        return obs, reward, terminated, truncated, info

    def reward(
        self, reward: float, components: Mapping[str, float], *, answered: bool = True
    ) -> tuple[float, dict[str, float]]:
        """The new reward of the last step, and the components to record what changed.

        ``answered`` is False when the episode ended without a final answer
        (truncated, or ended on an invalid action).
        """
        raise NotImplementedError

    def __str__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"<{type(self).__name__}({args}){self.env}>"


class CountCost(EpisodeRewardWrapper):
    """Subtract ``cost`` per unit of the component ``counted``; records the charge as ``recorded``.

    Subclasses name the two components (e.g. ``turns`` and ``turn_cost``); the
    charge adds to a ``recorded`` value already in the components, so two
    such wrappers stack.
    """

    counted: ClassVar[str]
    recorded: ClassVar[str]

    def __init__(self, env: gym.Env[str, str], cost: float) -> None:
        self.cost = check_amount("cost", cost)
        super().__init__(env, cost=cost)

    def reward(
        self, reward: float, components: Mapping[str, float], *, answered: bool = True
    ) -> tuple[float, dict[str, float]]:
        charged = self.cost * component(components, self.counted, type(self).__name__)
        return reward - charged, {self.recorded: components.get(self.recorded, 0.0) + charged}


def component(components: Mapping[str, float], key: str, wrapper: str) -> float:
    """A component the wrapper needs; missing raises ``KeyError`` with context, never counts as 0."""
    if key not in components:
        raise KeyError(f"{wrapper} needs the {key!r} component, but the env reported only {sorted(components)}")
    return float(components[key])


def check_amount(name: str, value: float) -> float:
    """A finite, non-negative wrapper parameter, or a ``ValueError`` naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)
