"""The table of multi-agent env ids: frozen records, string entry points, nothing built on import.

PettingZoo has no global registry, so the ids live here and nowhere else;
``import agentenv`` does not import this package.

Parallel versions: PettingZoo's ``aec_to_parallel`` does not fit a dialogue.
It steps every agent once per cycle with actions chosen at the same time, so
the patient would have to reply before reading the doctor's question, and the
doctor could not call tools several times in a row. The turn-based
conversion fits (``pettingzoo.utils.conversions.turn_based_aec_to_parallel``):
each parallel step takes an action for every live agent and applies only the
one of the agent whose turn it is, named in ``info["active_agent"]`` (at
reset: the ``first`` speaker, ``doctor`` or ``user``); the other actions are
ignored.

Example:
    >>> env_ids()
    ['DiagnosisDialogue-v0', 'MediaConcierge-v0']
    >>> spec("MediaConcierge-v0").agents
    ('assistant', 'user')
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

from agentenv.multiagent.base import DialogueEnv


@dataclass(frozen=True)
class MultiAgentSpec:
    """One registered multi-agent env id."""

    id: str
    entry_point: str
    agents: tuple[str, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    description: str = ""


MULTIAGENT_SPECS: tuple[MultiAgentSpec, ...] = (
    MultiAgentSpec(
        "DiagnosisDialogue-v0",
        "agentenv.multiagent.diagnosis_dialogue:DiagnosisDialogueEnv",
        ("doctor", "patient"),
        {"max_turns": 10},
        "Doctor (rare-disease tools, no ask_patient) and patient (private phenotype record) talk; "
        "the doctor answers a top-3 diagnosis.",
    ),
    MultiAgentSpec(
        "MediaConcierge-v0",
        "agentenv.multiagent.media_concierge:MediaConciergeEnv",
        ("assistant", "user"),
        {"max_turns": 10},
        "A user opens with a vague film request and reveals held-back constraints when asked; "
        "the assistant has the film-catalog tools and answers a title.",
    ),
)


def env_ids() -> list[str]:
    """All multi-agent ids, in table order."""
    return [s.id for s in MULTIAGENT_SPECS]


def spec(env_id: str) -> MultiAgentSpec:
    """The record of one id; an unknown id lists the known ones."""
    for s in MULTIAGENT_SPECS:
        if s.id == env_id:
            return s
    raise KeyError(f"unknown multi-agent env {env_id!r}; known: {', '.join(env_ids())}")


def make(env_id: str, **kwargs: Any) -> DialogueEnv:
    """Build the AEC env of an id; ``kwargs`` override the registered ones (no wrappers are added)."""
    s = spec(env_id)
    module, _, name = s.entry_point.partition(":")
    cls = getattr(importlib.import_module(module), name)
    return cls(**{**s.kwargs, **kwargs})


def parallel_make(env_id: str, **kwargs: Any) -> ParallelEnv:
    """The Parallel version of an id: the turn-based conversion of :func:`make` (see the module docstring)."""
    return turn_based_aec_to_parallel(make(env_id, **kwargs))
