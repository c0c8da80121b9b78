"""``compute_score`` in verl's custom-reward format, graded by the row's env.

verl calls ``compute_score(data_source, solution_str, ground_truth, extra_info)`` for each rollout
(``custom_reward_function.path`` / ``.name`` in its config); its reward loop merges the agent loop's
``extra_fields`` into ``extra_info``. With the ``agentenv`` agent loop the env already graded the
episode (the loop sets ``reward_score``, so verl skips this function) and this returns that score.
For any other agent loop (verl's ``single_turn_agent`` on a ``*-SingleTurn-v0`` id, say) it plays
``solution_str`` as the episode's one action on the row's task and seed and returns the env's
reward: the reward ``agentenv eval`` gives that text as the first turn. No verl import.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentenv.integrations.row_episodes import SHARED_POOL, EpisodeSpec


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any = None,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """The env's reward for the rollout: ``{"score": float, <reward components>..., "turns": int}``."""
    info = dict(extra_info or {})
    if "agentenv_reward" in info:
        return {
            "score": float(info["agentenv_reward"]),
            **_components(info.get("agentenv_reward_components")),
            "turns": int(info.get("agentenv_turns", 0)),
        }
    spec = EpisodeSpec.from_fields(info)
    with SHARED_POOL.lend(spec) as env:
        _, reset_info = env.reset(**spec.reset_kwargs())
        spec.check_task(reset_info)
        _, reward, _, _, step_info = env.step(solution_str)
    return {
        "score": float(reward),
        **_components(step_info.get("reward_components")),
        "turns": int(step_info["turn"]),
    }


def _components(components: Mapping[str, Any] | None) -> dict[str, float]:
    return {str(k): float(v) for k, v in (components or {}).items()}
