"""``BudgetEndsEpisode``: for the learner, running out of turns is the end of the episode, not a pause.

Why: the text envs report an exhausted turn budget as ``truncated``, and
Stable-Baselines3 then bootstraps the return with the critic's value of the
last state, as if the episode could go on. Here it cannot (the budget is part
of the task, and the features include the turn fraction), and with
``gamma=1`` the bootstrap becomes a loop the policy can exploit: calling tools
until the budget runs out earns whatever the critic believes, never the 0 the
env pays. In our first lenient runs the policies learned exactly that
(8-9 tool calls, answering in 13-40% of episodes). Treating the time limit as
a terminal state is the correct target when time is part of the state
(Pardo et al., 2018, "Time limits in reinforcement learning").

Only the flags the learner sees change; the reward and ``info`` are the text
env's (``info["turn_budget_ended"]`` marks such a step). Evaluation runs the
text env through the harness, without this wrapper.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym


class BudgetEndsEpisode(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Reports ``truncated`` (turn budget exhausted) as ``terminated`` to the learner."""

    def __init__(self, env: gym.Env) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if truncated and not terminated:
            info = {**info, "turn_budget_ended": True}
            return obs, reward, True, False, info
        return obs, reward, terminated, truncated, info
