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
    >>> compute_score("agentenv/MediaSearch-v0", "<answer>Heat</answer>", None, {"tool_interact_info": turns})
    {'score': 1.0, 'turns': 2, 'accuracy': 1.0}
    >>> compute_score("agentenv/MediaSearch-v0", "no answer", None, {"tool_interact_info": []})
    {'score': 0.0, 'turns': 0}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


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
    if final is not None:
        components = {str(k): float(v) for k, v in (final.get("reward_components") or {}).items()}
        return {
            "score": float(final["total_reward"]),
            "turns": int(final.get("turns", len(turns))),
            **components,
        }
    rewards = [float(t["reward"]) for t in turns if isinstance(t.get("reward"), (int, float))]
    return {"score": float(sum(rewards)), "turns": len(rewards)}
