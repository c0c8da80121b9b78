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

import math
from collections.abc import Mapping
from typing import Any

from agentenv.engine.turns import BEHAVIOUR_COMPONENTS
from agentenv.integrations.row_episodes import SHARED_POOL, EpisodeSpec


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any = None,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """The env's reward for the rollout: ``{"score": float, <reward components>..., "turns": int}``."""
    if extra_info is not None and not isinstance(extra_info, Mapping):
        raise ValueError(f"extra_info must be the row's object, got {type(extra_info).__name__}")
    info = dict(extra_info or {})
    if "agentenv_reward" in info:  # the agentenv agent loop's own fields (verl merges them in)
        return {
            "score": _finite(info["agentenv_reward"], "agentenv_reward"),
            **_components(info.get("agentenv_reward_components"), "agentenv_reward_components"),
            "turns": int(_finite(info.get("agentenv_turns", 0), "agentenv_turns")),
        }
    spec = EpisodeSpec.from_fields(info)
    with SHARED_POOL.lend(spec) as env:
        _, reset_info = env.reset(**spec.reset_kwargs())
        spec.check_task(reset_info)
        _, reward, _, _, step_info = env.step(solution_str)
        names = reported_components(env)
    return {
        "score": float(reward),
        **every_component(step_info.get("reward_components"), names),
        "turns": int(step_info["turn"]),
    }


def reported_components(env: Any) -> frozenset[str]:
    """The component names ``env`` reports when an episode ends (empty when it does not declare them)."""
    graded = env.unwrapped._graded_components()
    return frozenset() if graded is None else graded | BEHAVIOUR_COMPONENTS


def every_component(
    components: Mapping[str, Any] | None, names: frozenset[str]
) -> dict[str, float]:
    """``components`` with every name of ``names`` present (0.0 where the episode has not ended).

    Why: verl gathers a batch's extra reward fields by the first rollout's keys; a rollout that
    had not ended returned none of them.
    """
    out = dict.fromkeys(sorted(names), 0.0)
    out.update(_components(components, "reward_components"))
    return out


def _finite(value: Any, field: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if not math.isfinite(number):
        raise ValueError(f"extra_info[{field!r}] must be a finite number, got {value!r}")
    return number


def _components(components: Any, field: str) -> dict[str, float]:
    if components is None:
        return {}
    if not isinstance(components, Mapping):
        raise ValueError(
            f"extra_info[{field!r}] must be an object, got {type(components).__name__}"
        )
    return {str(k): _finite(v, f"{field}.{k}") for k, v in components.items()}
