"""The episode-end reward wrappers: their base, and the per-unit costs and bonus built on it.

* :class:`EpisodeRewardWrapper`: the base (one hook, :meth:`~EpisodeRewardWrapper.reward`);
* :class:`ToolCallCost`, :class:`TurnCost`: charge each tool call or turn;
* :class:`FormatBonus`: reward a well-formed episode.

They live together because each is a rate times one component, a few lines
on the shared :class:`PerUnitReward`; :class:`~agentenv.wrappers.prediction_limit.PredictionLimit`
has rules of its own and its own module.

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


class PerUnitReward(EpisodeRewardWrapper):
    """Add ``sign * rate`` per unit of the component ``counted``; records the amount as ``recorded``.

    Subclasses name the two components (e.g. ``turns`` and ``turn_cost``) and
    the sign (a cost subtracts, a bonus adds). The recorded amount adds to a
    ``recorded`` value already in the components, so two such wrappers stack.
    """

    counted: ClassVar[str]
    recorded: ClassVar[str]
    sign: ClassVar[float]

    def __init__(self, env: gym.Env[str, str], rate: float, **params: float) -> None:
        self.rate = rate
        super().__init__(env, **params)

    def reward(
        self, reward: float, components: Mapping[str, float], *, answered: bool = True
    ) -> tuple[float, dict[str, float]]:
        amount = self.rate * component(components, self.counted, type(self).__name__)
        return reward + self.sign * amount, {
            self.recorded: components.get(self.recorded, 0.0) + amount
        }


class CountCost(PerUnitReward):
    """Subtract ``cost`` per unit of the component ``counted``; records the charge as ``recorded``."""

    sign = -1.0

    def __init__(self, env: gym.Env[str, str], cost: float) -> None:
        self.cost = check_amount("cost", cost)
        super().__init__(env, self.cost, cost=cost)


class ToolCallCost(CountCost):
    """Subtract ``cost`` per tool call (component ``tool_calls``); records ``tool_call_cost``.

    Why: with a reward of accuracy and format only, the number of tool calls
    never falls under RL. Prefer ``RewardConfig.tool_call_cost`` (with a
    ``cost_cap``) when you build the env; this wrapper adds the same cost to
    an env you did not build.

    Example:
        >>> ToolCallCost(gym.Env(), cost=0.05).reward(1.0, {"tool_calls": 4.0})
        (0.8, {'tool_call_cost': 0.2})
    """

    counted = "tool_calls"
    recorded = "tool_call_cost"


class TurnCost(CountCost):
    """Subtract ``cost`` per turn (component ``turns``, invalid actions included); records ``turn_cost``.

    Why: a cost per turn makes long, wandering episodes and retried malformed
    actions cost something, which accuracy alone never does. Prefer
    ``RewardConfig.turn_cost`` when you build the env.

    Example:
        >>> TurnCost(gym.Env(), cost=0.25).reward(1.0, {"turns": 3.0})
        (0.25, {'turn_cost': 0.75})
    """

    counted = "turns"
    recorded = "turn_cost"


class FormatBonus(PerUnitReward):
    """Add ``bonus * format`` at the episode's end; records ``format_bonus``.

    Why: early in RL a policy that never closes its ``<answer>`` tag gets no
    signal at all; a small bonus for the ``format`` component (an answer, no
    invalid action) gives it one. Keep it small next to accuracy, or the
    policy learns to answer well-formed nonsense.

    Example:
        >>> FormatBonus(gym.Env(), bonus=0.1).reward(0.0, {"format": 1.0})
        (0.1, {'format_bonus': 0.1})
    """

    counted = "format"
    recorded = "format_bonus"
    sign = 1.0

    def __init__(self, env: gym.Env[str, str], bonus: float) -> None:
        self.bonus = check_amount("bonus", bonus)
        super().__init__(env, self.bonus, bonus=bonus)


def component(components: Mapping[str, float], key: str, wrapper: str) -> float:
    """A component the wrapper needs; missing raises ``KeyError`` with context, never counts as 0."""
    if key not in components:
        raise KeyError(
            f"{wrapper} needs the {key!r} component, but the env reported only {sorted(components)}"
        )
    return float(components[key])


def check_amount(name: str, value: float) -> float:
    """A finite, non-negative wrapper parameter, or a ``ValueError`` naming it."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)
