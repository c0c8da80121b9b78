"""ToolCallCost: charge each tool call of an episode at its end.

Why: with a reward of accuracy and format only, the number of tool calls
never falls under RL. Prefer ``RewardConfig.tool_call_cost`` (with a
``cost_cap``) when you build the env; this wrapper adds the same cost to an
env you did not build.

Example:
    >>> import gymnasium as gym
    >>> ToolCallCost(gym.Env(), cost=0.05).reward(1.0, {"tool_calls": 4.0})
    (0.8, {'tool_call_cost': 0.2})
"""

from __future__ import annotations

from collections.abc import Mapping

import gymnasium as gym

from agentenv.wrappers.episode_reward import EpisodeRewardWrapper, check_amount, component


class ToolCallCost(EpisodeRewardWrapper):
    """Subtract ``cost`` per tool call (component ``tool_calls``); records ``tool_call_cost``."""

    def __init__(self, env: gym.Env[str, str], cost: float) -> None:
        self.cost = check_amount("cost", cost)
        super().__init__(env, cost=cost)

    def reward(
        self, reward: float, components: Mapping[str, float], *, answered: bool = True
    ) -> tuple[float, dict[str, float]]:
        charged = self.cost * component(components, "tool_calls", "ToolCallCost")
        return reward - charged, {"tool_call_cost": components.get("tool_call_cost", 0.0) + charged}
