"""PredictionLimit: enforce "at most k predictions" on the reward, never by truncating the list.

Why: a model rewarded for "the right disease is among my 3 predictions"
learned to list more than 3. Scoring only the first k of a longer list would
hide that from the reward, so an answer with more than ``k`` predictions
(component ``n_predictions``) is treated instead:

* ``"zero"`` (default): the env's score (the weighted part of its
  :class:`~agentenv.rewards.config.RewardConfig`, e.g. ``accuracy`` or ``hit@any``)
  and any inner ``format_bonus`` are removed; costs stay, so going over the
  limit is never cheaper than a wrong answer;
* ``"penalty"``: ``penalty`` is subtracted.

A family that does not count predictions (no ``n_predictions`` component)
raises ``KeyError`` on its first answer: a limit that cannot be checked is
an error, never a pass.

The wrapper only tightens a limit: it never raises a reward, so an env whose
own config already zeroed an over-limit answer is left as it is. To loosen
the family's own limit, build the env with ``reward={"over_limit": "allow"}``.

Example:
    >>> import gymnasium as gym
    >>> limit = PredictionLimit(gym.Env(), k=3, treatment="penalty", penalty=0.5)
    >>> limit.reward(1.0, {"n_predictions": 5.0})
    (0.5, {'prediction_limit': -0.5, 'prediction_limit_over': 1.0})
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import gymnasium as gym

from agentenv.rewards.config import RewardConfig
from agentenv.wrappers.episode_reward import EpisodeRewardWrapper, check_amount, component


class PredictionLimit(EpisodeRewardWrapper):
    """Zero or penalise answers with more than ``k`` predictions; records ``prediction_limit`` (the change)."""

    def __init__(
        self,
        env: gym.Env[str, str],
        k: int,
        treatment: Literal["zero", "penalty"] = "zero",
        penalty: float = 1.0,
    ) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be an int >= 1, got {k!r}")
        if treatment not in ("zero", "penalty"):
            raise ValueError(f"treatment must be 'zero' or 'penalty', got {treatment!r}")
        self.k, self.treatment, self.penalty = k, treatment, check_amount("penalty", penalty)
        self._config = getattr(env.unwrapped, "reward_config", None)
        if treatment == "zero" and not isinstance(self._config, RewardConfig):
            raise TypeError(
                "PredictionLimit(treatment='zero') removes the env's score, so it needs an agentenv ToolEnv "
                f"(with a reward_config) underneath, not {type(env.unwrapped).__name__}; use treatment='penalty'"
            )
        super().__init__(env, k=k, treatment=treatment, penalty=penalty)

    def reward(
        self, reward: float, components: Mapping[str, float], *, answered: bool = True
    ) -> tuple[float, dict[str, float]]:
        # No answer (truncated, or an invalid last action), no predictions, whatever the family reports.
        over = answered and component(components, "n_predictions", "PredictionLimit") > self.k
        change = 0.0
        if over and self.treatment == "penalty":
            change = -self.penalty
        elif over:
            assert self._config is not None
            change = -max(self._config.score(components) + components.get("format_bonus", 0.0), 0.0)
        return reward + change, {
            "prediction_limit": components.get("prediction_limit", 0.0) + change,
            "prediction_limit_over": max(float(over), components.get("prediction_limit_over", 0.0)),
        }
