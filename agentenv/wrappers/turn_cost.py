"""TurnCost: charge each turn (every action, invalid ones included) at the episode's end.

Why: a cost per turn makes long, wandering episodes and retried malformed
actions cost something, which accuracy alone never does. Prefer
``RewardConfig.turn_cost`` when you build the env.

Example:
    >>> import gymnasium as gym
    >>> TurnCost(gym.Env(), cost=0.25).reward(1.0, {"turns": 3.0})
    (0.25, {'turn_cost': 0.75})
"""

from __future__ import annotations

from collections.abc import Mapping

import gymnasium as gym

from agentenv.wrappers.episode_reward import EpisodeRewardWrapper, check_amount, component


class TurnCost(EpisodeRewardWrapper):
    """Subtract ``cost`` per turn (component ``turns``); records ``turn_cost``."""

    def __init__(self, env: gym.Env[str, str], cost: float) -> None:
        self.cost = check_amount("cost", cost)
        super().__init__(env, cost=cost)

    def reward(
        self, reward: float, components: Mapping[str, float], *, answered: bool = True
    ) -> tuple[float, dict[str, float]]:
        charged = self.cost * component(components, "turns", "TurnCost")
        return reward - charged, {"turn_cost": components.get("turn_cost", 0.0) + charged}
