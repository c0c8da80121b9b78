"""Gymnasium wrappers for the common reward changes, in modules named for what they change.

* :class:`ToolCallCost`, :class:`TurnCost`: charge tool calls or turns, and
  :class:`FormatBonus`: reward a well-formed episode (all in
  :mod:`~agentenv.wrappers.episode_reward`, with their base);
* :class:`PredictionLimit`: zero or penalise answers with more than k predictions;
* :class:`CostShaping`: pay the env's costs on the step that incurs them.

The first four change only the reward of the step that ends the episode, read
``info["reward_components"]``, and record what they changed in a new copy of
that dict. They show their parameters in ``repr(env)`` and in ``env.spec``.
Prefer the matching :class:`~agentenv.rewards.config.RewardConfig` fields when you
build the env yourself; the wrappers change an env you were handed.

Example:
    >>> import gymnasium as gym
    >>> PredictionLimit(ToolCallCost(gym.Env(), cost=0.05), k=3, treatment="penalty")
    <PredictionLimit(k=3, treatment='penalty', penalty=1.0)<ToolCallCost(cost=0.05)<Env instance>>>
"""

from __future__ import annotations

from agentenv.wrappers.cost_shaping import CostShaping
from agentenv.wrappers.episode_reward import (
    EpisodeRewardWrapper,
    FormatBonus,
    ToolCallCost,
    TurnCost,
)
from agentenv.wrappers.prediction_limit import PredictionLimit

__all__ = [
    "CostShaping",
    "EpisodeRewardWrapper",
    "FormatBonus",
    "PredictionLimit",
    "ToolCallCost",
    "TurnCost",
]
