"""The multi-agent env ids, read from the family registry, and ``make`` / ``env`` / ``parallel_make``.

PettingZoo has no global registry, so each family declares its dialogues in
its :class:`~agentenv.families.Family` record (``dialogues``, as
:class:`~agentenv.families.DialogueSpec` entries with string entry points);
this module reads them from :func:`agentenv.families.dialogue_specs` and never
imports a family itself. ``import agentenv`` does not import this package,
and importing it builds nothing.

A family kept outside this package is reached the way ``gym.make`` reaches
one: ``make("mypkg.tasks:MyDialogue-v0")`` imports ``mypkg.tasks`` (which
registers its family) before looking the id up.

Constructors, named as in PettingZoo (whose env modules have ``env()``,
``raw_env()`` and ``parallel_env()``):

* :func:`env` (``env(id)``): the AEC env inside PettingZoo's
  ``OrderEnforcingWrapper``, which is what PettingZoo's own ``env()`` returns:
  it refuses ``step``, ``observe`` and ``agent_iter`` before ``reset`` and
  checks that an ``agent_iter`` loop steps every agent. Its other usual
  wrappers do not apply to text: ``AssertOutOfBoundsWrapper`` would raise on
  an action longer than the action space allows, which these envs answer with
  an explained error observation (agent input never raises), and
  ``TerminateIllegalWrapper`` and ``ClipOutOfBoundsWrapper`` need action masks
  or boxes. ``env(id).unwrapped`` is the bare env.
* :func:`make` and its alias :func:`raw_env`: the bare
  :class:`~agentenv.multiagent.base.DialogueEnv` (no wrappers), with its
  family hooks and attributes (``task``, ``default_policy``, ...) at hand.
* :func:`parallel_make` (alias :func:`parallel_env`): the Parallel version.
  Each family module also has ``env()``, ``raw_env()`` and ``parallel_env()``
  for its id (``agentenv.envs.rare_disease.dialogue.doctor_patient.env()``).

Parallel versions: PettingZoo's ``aec_to_parallel`` does not fit a dialogue.
It steps every agent once per cycle with actions chosen at the same time, so
the patient would have to reply before reading the doctor's question, and the
doctor could not call tools several times in a row. The turn-based
conversion fits (:class:`~agentenv.multiagent.parallel.TurnBasedParallel`,
PettingZoo's ``turn_based_aec_to_parallel`` with ``active_agent`` in every
info): each parallel step takes an action for every live agent and applies
only the one of the agent whose turn it is, named in ``info["active_agent"]``
(at reset: the ``first`` speaker, ``doctor`` or ``user``; ``None`` on the
step that ends the dialogue); the other actions are ignored.

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
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from agentenv.families import DialogueSpec, bare_id, dialogue_specs, resolve
from agentenv.multiagent.base import DialogueEnv
from agentenv.multiagent.parallel import TurnBasedParallel


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
    """Build the bare AEC env of an id; ``kwargs`` override the registered ones (no wrappers are added)."""
    s = spec(env_id)
    return resolve(s.entry_point)(**{**s.kwargs, **kwargs})


raw_env = make
"""PettingZoo's name for the bare env: the same function as :func:`make`."""


def env(env_id: str, **kwargs: Any) -> OrderEnforcingWrapper:
    """The AEC env of an id as PettingZoo's ``env()`` gives one: :func:`make` inside ``OrderEnforcingWrapper``."""
    return OrderEnforcingWrapper(make(env_id, **kwargs))


def parallel_make(env_id: str, **kwargs: Any) -> ParallelEnv:
    """The Parallel version of an id: the turn-based conversion of :func:`make` (see the module docstring)."""
    return TurnBasedParallel(make(env_id, **kwargs))


parallel_env = parallel_make
"""PettingZoo's name for the Parallel constructor: the same function as :func:`parallel_make`."""
