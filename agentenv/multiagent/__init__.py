"""Multi-agent variants on PettingZoo: doctor ↔ patient, and user ↔ assistant.

Two AEC envs (:mod:`~agentenv.multiagent.registry`): ``DiagnosisDialogue-v0``
(agents ``doctor``, ``patient``) and ``MediaConcierge-v0`` (``assistant``,
``user``). Observations and actions are text, parsed as in the single-agent
envs plus one ``<say>…</say>`` message form. ``import agentenv`` does not
import this package; importing it builds nothing.

Example:
    >>> from agentenv.multiagent import env_ids
    >>> env_ids()
    ['DiagnosisDialogue-v0', 'MediaConcierge-v0']
"""

from __future__ import annotations

from agentenv.multiagent.base import DialogueEnv, Judgment
from agentenv.multiagent.policies import SayWrapper, ScriptedPatient, ScriptedUser
from agentenv.multiagent.registry import MULTIAGENT_SPECS, env_ids, make, parallel_make
from agentenv.multiagent.simulator_check import SimulatorReport, simulator_check
from agentenv.multiagent.single_agent import SingleAgentDialogue, as_single_agent

__all__ = [
    "MULTIAGENT_SPECS",
    "DialogueEnv",
    "Judgment",
    "SayWrapper",
    "ScriptedPatient",
    "ScriptedUser",
    "SimulatorReport",
    "SingleAgentDialogue",
    "as_single_agent",
    "env_ids",
    "make",
    "parallel_make",
    "simulator_check",
]
