"""FormatBonus: add a bonus to well-formed episodes.

Why: early in RL a policy that never closes its ``<answer>`` tag gets no
signal at all; a small bonus for the ``format`` component (an answer, no
invalid action) gives it one. Keep it small next to accuracy, or the policy
learns to answer well-formed nonsense.

Example:
    >>> import gymnasium as gym
    >>> FormatBonus(gym.Env(), bonus=0.1).reward(0.0, {"format": 1.0})
    (0.1, {'format_bonus': 0.1})
"""

from __future__ import annotations

from collections.abc import Mapping

import gymnasium as gym

from agentenv.wrappers.episode_reward import EpisodeRewardWrapper, check_amount, component


class FormatBonus(EpisodeRewardWrapper):
    """Add ``bonus * format`` at the episode's end; records ``format_bonus``."""

    def __init__(self, env: gym.Env[str, str], bonus: float) -> None:
        self.bonus = check_amount("bonus", bonus)
        super().__init__(env, bonus=bonus)

    def reward(
        self, reward: float, components: Mapping[str, float], *, answered: bool = True
    ) -> tuple[float, dict[str, float]]:
        added = self.bonus * component(components, "format", "FormatBonus")
        return reward + added, {"format_bonus": components.get("format_bonus", 0.0) + added}
