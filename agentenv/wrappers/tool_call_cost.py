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

from agentenv.wrappers.episode_reward import CountCost


class ToolCallCost(CountCost):
    """Subtract ``cost`` per tool call (component ``tool_calls``); records ``tool_call_cost``."""

    counted = "tool_calls"
    recorded = "tool_call_cost"
