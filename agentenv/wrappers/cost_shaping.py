"""CostShaping: pay an episode's costs on the steps that incur them, with the same return.

Why: a cost charged only at the end of a long episode is hard to assign to the
tool call that caused it. Shaping moves each increase of the (capped) cost of
the env's :class:`~agentenv.rewards.config.RewardConfig` (``tool_call_cost``,
``turn_cost``, ``latency_cost``) to the step that made it: a step that calls 3
tools earns ``-3 * tool_call_cost``; the last step earns the env's reward plus
everything already paid. The return of every episode is unchanged, so
shaping changes credit assignment, never the optimum. ``token_cost`` is paid
at the end (tokens are not counted per step).

This wrapper overrides ``reset`` (to zero its running counts) and ``step``;
it reads only ``info`` (``turn``, ``tool_calls``, the new tool messages) and
the tools' declared ``latency_ms``. It is for envs whose step loop pays costs
at the end (every ToolEnv today); ``RewardConfig.shaping`` is the switch for a
step loop that shapes by itself, and the wrapper refuses to charge twice.
"""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym

from agentenv.rewards.config import RewardConfig


class CostShaping(gym.Wrapper[str, str, str, str], gym.utils.RecordConstructorArgs):
    """Per-step costs from the env's reward config; records ``shaping_paid`` at the end."""

    def __init__(self, env: gym.Env[str, str]) -> None:
        config = getattr(env.unwrapped, "reward_config", None)
        if not isinstance(config, RewardConfig):
            raise TypeError(
                f"CostShaping needs an agentenv ToolEnv underneath, not {type(env.unwrapped).__name__}"
            )
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        self.config = config.model_copy(update={"shaping": True})
        self._paid, self._latency_ms, self._seen = 0.0, 0.0, 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._paid, self._latency_ms, self._seen = 0.0, 0.0, len(info["messages"])
        return obs, info

    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        tools = self.env.unwrapped.tools
        for message in info["messages"][self._seen :]:
            if message["role"] == "tool":
                self._latency_ms += tools[message["name"]].latency_ms
        self._seen = len(info["messages"])
        if not (terminated or truncated):
            if reward != 0:
                raise RuntimeError(
                    f"the env already gave a mid-episode reward ({reward}); CostShaping would charge twice"
                )
            counts = {
                "tool_calls": info["tool_calls"],
                "turns": info["turn"],
                "latency_ms": self._latency_ms,
            }
            reward, self._paid = self.config.step_reward(self._paid, counts)
            return obs, reward, terminated, truncated, info
        components = info.get("reward_components") or {}
        info = {**info, "reward_components": {**components, "shaping_paid": self._paid}}
        return obs, round(float(reward) + self._paid, 10), terminated, truncated, info
