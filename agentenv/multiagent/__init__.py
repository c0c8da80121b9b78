"""Multi-agent variants on PettingZoo: a lead agent with tools and a simulated side that talks.

The generic machinery of two-agent text dialogues: the AEC base on the shared
turn engine (:class:`DialogueEnv`), ``<say>`` message parsing, the checker's
:class:`Judgment`, the registry of ids (:func:`make`, :func:`parallel_make`,
read from the family records), the single-agent adapter
(:func:`as_single_agent`) and the simulator validity report
(:func:`simulator_check`). PettingZoo's constructor names work too:
:func:`env` (``env(id)``: the env inside ``OrderEnforcingWrapper``, as
PettingZoo's own ``env()``), :func:`raw_env` (the bare env, same as
:func:`make`) and :func:`parallel_env` (same as :func:`parallel_make`); each
family module has ``env()``, ``raw_env()`` and ``parallel_env()`` for its id.
The dialogues themselves live with their families:
``DiagnosisDialogue-v0`` (agents ``doctor``, ``patient``) in
``agentenv.envs.rare_disease.dialogue.doctor_patient`` and ``MediaConcierge-v0``
(``assistant``, ``user``) in ``agentenv.envs.media_search.dialogue.concierge``.
Observations and actions are text, parsed as in the single-agent envs plus one
``<say>…</say>`` message form. ``import agentenv`` does not import this
package; importing it builds nothing.

Example:
    >>> from agentenv.multiagent import env_ids
    >>> env_ids()
    ['DiagnosisDialogue-v0', 'MediaConcierge-v0']
"""

from __future__ import annotations

from agentenv.multiagent.base import DialogueEnv, Judgment
from agentenv.multiagent.parallel import TurnBasedParallel
from agentenv.multiagent.policy_helpers import SayWrapper
from agentenv.multiagent.registry import (
    env,
    env_ids,
    make,
    parallel_env,
    parallel_make,
    raw_env,
    spec,
)
from agentenv.multiagent.simulator_check import SimulatorReport, simulator_check
from agentenv.multiagent.single_agent import SingleAgentDialogue, as_single_agent

__all__ = [
    "DialogueEnv",
    "Judgment",
    "SayWrapper",
    "SimulatorReport",
    "SingleAgentDialogue",
    "TurnBasedParallel",
    "as_single_agent",
    "env",
    "env_ids",
    "make",
    "parallel_env",
    "parallel_make",
    "raw_env",
    "simulator_check",
    "spec",
]
