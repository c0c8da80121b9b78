"""``compute_score`` in verl's custom-reward format for rollouts of verl-tool's agent loop.

verl-tool's agent loop keeps every tool-server answer of a trajectory in its output's
``extra_fields["tool_interact_info"]`` (one dict per turn: the observation object's keys, here
``obs``, ``reward`` and, on the turn that ended the episode, ``total_reward``,
``reward_components``, ``turns``), and verl's reward loop merges ``extra_fields`` into the
``extra_info`` it passes to ``compute_score``. The score is the episode's return as the env
computed it: ``total_reward`` of the turn that ended the episode, else (the model stopped or ran
out of turns first) the sum of the turns' rewards. That is the reward ``agentenv eval`` gives the
same text, provided the final answer reached the server: put ``</answer>`` beside ``</tool_call>``
in verl-tool's ``action_stop_tokens`` file (docs/training-with-verl-tool.md). No verl import.

Example:
    >>> turns = [{"obs": "...", "reward": 0.0}, {"obs": "", "reward": 1.0, "total_reward": 1.0, "turns": 2,
    ...           "reward_components": {"accuracy": 1.0}}]
    >>> score = compute_score("agentenv/MediaSearch-v0", "<answer>Heat</answer>", None,
    ...                       {"tool_interact_info": turns})
    >>> score["score"], score["turns"], score["accuracy"], score["tool_calls"]
    (1.0, 2, 1.0, 0.0)
    >>> score = compute_score("agentenv/MediaSearch-v0", "no answer", None, {"tool_interact_info": []})
    >>> score["score"], score["turns"], score["accuracy"]
    (0.0, 0, 0.0)
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from agentenv.integrations.verl.reward import every_component, reported_components


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any = None,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """The episode's return from the tool server's answers: ``{"score", "turns", <reward components>}``."""
    turns = [
        t for t in (extra_info or {}).get("tool_interact_info") or [] if isinstance(t, Mapping)
    ]
    final = next((t for t in reversed(turns) if "total_reward" in t), None)
    names = _component_names(data_source)
    if final is not None:
        return {  # components first: "turns" is one too, and the count below wins
            **every_component(final.get("reward_components"), names),
            "score": float(final["total_reward"]),
            "turns": int(final.get("turns", len(turns))),
        }
    rewards = [float(t["reward"]) for t in turns if isinstance(t.get("reward"), (int, float))]
    # the same keys as an ended episode's: verl gathers a batch's fields by the first rollout's
    return {
        **dict.fromkeys(sorted(names), 0.0),
        "score": float(sum(rewards)),
        "turns": len(rewards),
    }


@lru_cache(maxsize=64)
def _component_names(data_source: str) -> frozenset[str]:
    """The components an ``agentenv/<id>`` env reports at an episode's end (empty for another source)."""
    env_id = data_source.removeprefix("agentenv/")
    if env_id == data_source:
        return frozenset()
    import gymnasium as gym

    import agentenv  # noqa: F401 - registers the ids

    try:
        env = gym.make(env_id)
    except gym.error.Error:
        return frozenset()
    try:
        return reported_components(env)
    finally:
        env.close()
