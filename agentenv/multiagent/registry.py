"""The multi-agent env ids, read from the family registry, and ``make`` / ``parallel_make``.

PettingZoo has no global registry, so each family declares its dialogues in
its :class:`~agentenv.families.Family` record (``dialogues``, as
:class:`~agentenv.families.DialogueSpec` entries with string entry points);
this module reads them from :func:`agentenv.families.dialogue_specs` and never
imports a family itself. ``import agentenv`` does not import this package,
and importing it builds nothing.

A family kept outside this package is reached the way ``gym.make`` reaches
one: ``make("mypkg.tasks:MyDialogue-v0")`` imports ``mypkg.tasks`` (which
registers its family) before looking the id up.

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
from typing import Any

from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

from agentenv.families import DialogueSpec, bare_id, dialogue_specs, resolve
from agentenv.multiagent.base import DialogueEnv


def env_ids() -> list[str]:
    """Every registered multi-agent id, sorted (so listings do not depend on registration order)."""
    return sorted(s.id for s in dialogue_specs())


def spec(env_id: str) -> DialogueSpec:
    """The record of one id (``"module:Id"`` imports ``module`` first); an unknown id lists the known ones."""
    module, _, _ = env_id.rpartition(":")
    if module:
        importlib.import_module(module)
    bare = bare_id(env_id)
    for s in dialogue_specs():
        if s.id == bare:
            return s
    raise KeyError(
        f"unknown multi-agent env {bare!r}; known: {', '.join(env_ids()) or 'none'}. "
        "For a family outside agentenv, name its module: 'mypkg.module:MyDialogue-v0'"
    )


def make(env_id: str, **kwargs: Any) -> DialogueEnv:
    """Build the AEC env of an id; ``kwargs`` override the registered ones (no wrappers are added)."""
    s = spec(env_id)
    return resolve(s.entry_point)(**{**s.kwargs, **kwargs})


def parallel_make(env_id: str, **kwargs: Any) -> ParallelEnv:
    """The Parallel version of an id: the turn-based conversion of :func:`make` (see the module docstring)."""
    return turn_based_aec_to_parallel(make(env_id, **kwargs))
