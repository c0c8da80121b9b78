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

from agentenv.wrappers.episode_reward import CountCost


class TurnCost(CountCost):
    """Subtract ``cost`` per turn (component ``turns``); records ``turn_cost``."""

    counted = "turns"
    recorded = "turn_cost"
