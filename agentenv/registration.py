"""The table of env ids: one frozen record per id, string entry points, no side effects.

Variants are registered through kwargs, not subclasses: the single-turn
MediaSearch is the same class as the multi-turn one with ``mode="single_turn"``.

Example:
    >>> [spec.id for spec in ENV_SPECS][:2]
    ['MediaSearch-v0', 'MediaSearch-SingleTurn-v0']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym


@dataclass(frozen=True)
class EnvSpec:
    """One registered env id."""

    id: str
    entry_point: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    description: str = ""


ENV_SPECS: tuple[EnvSpec, ...] = (
    EnvSpec(
        "MediaSearch-v0",
        "agentenv.envs.media_search.env:MediaSearchEnv",
        {"mode": "multi_turn", "max_turns": 8},
        "Multi-turn agentic RAG over the film catalog: search, filter, title details, person lookup.",
    ),
    EnvSpec(
        "MediaSearch-SingleTurn-v0",
        "agentenv.envs.media_search.env:MediaSearchEnv",
        {"mode": "single_turn", "max_turns": 1},
        "Linear RAG: the top retrieved passages are in the prompt; one answer, no tools.",
    ),
    EnvSpec(
        "RareDiseaseDiagnosis-v0",
        "agentenv.envs.rare_disease.env:RareDiseaseEnv",
        {"mode": "multi_turn", "max_turns": 10},
        "Multi-turn diagnosis: presenting phenotypes, then disease search, profiles, HPO lookup, "
        "the reference ranker and ask_patient; a final top-3.",
    ),
    EnvSpec(
        "RareDiseaseDiagnosis-SingleTurn-v0",
        "agentenv.envs.rare_disease.env:RareDiseaseEnv",
        {"mode": "single_turn", "max_turns": 1},
        "All presenting phenotypes plus the reference ranker's candidates in the prompt; one top-3 answer.",
    ),
)


def register_envs() -> None:
    """Register every id with Gymnasium; idempotent, builds nothing."""
    for spec in ENV_SPECS:
        if spec.id not in gym.registry:
            gym.register(id=spec.id, entry_point=spec.entry_point, kwargs=dict(spec.kwargs))


def env_ids() -> list[str]:
    """All registered agentenv ids, in table order."""
    return [spec.id for spec in ENV_SPECS]
