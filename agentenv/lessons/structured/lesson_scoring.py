"""Scoring an agent on a lesson's env and reward through the evaluation runner, as ``agentenv eval`` does.

Why a module of its own: the lessons and the classic comparisons both score
trained policies and baselines this way, and neither should need the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def ensure_sb3_agent() -> None:
    """The ``sb3`` agent is declared as an entry point; register it in code if this install predates that."""
    from agentenv.evaluation.agents import agent_names, register_agent
    from agentenv.lessons.structured.sb3_agent import make_sb3_agent

    if "sb3" not in agent_names():
        register_agent("sb3", make_sb3_agent)


def score(
    agent: str,
    env_id: str,
    reward: Any,
    env_kwargs: Mapping[str, Any],
    *,
    episodes: int,
    seed: int,
    agent_args: Mapping[str, str] | None = None,
    split: str = "test",
) -> list[dict[str, Any]]:
    """Episode records of ``agent`` on ``split`` through the evaluation runner (what ``agentenv eval`` runs)."""
    from agentenv.evaluation.runner import RunConfig, run

    config = RunConfig(
        env_id=env_id,
        agent=agent,
        split=split,
        episodes=episodes,
        seed=seed,
        agent_args=tuple((agent_args or {}).items()),
        env_kwargs=tuple({"reward": reward, **dict(env_kwargs)}.items()),
    )
    result = run(config, progress=False)
    return [
        {
            "reward": r["reward"],
            "tool_calls": r["tool_calls"],
            "turns": r["turns"],
            "kind": r["kind"],
            "components": dict(r["reward_components"]),
        }
        for r in result.records
    ]
