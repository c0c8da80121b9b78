"""Tools for env authors: contract checkers for single-agent and dialogue envs.

Why here and not in the tests: a family kept outside this package (see
``docs/new-family.md``) needs the same checks the registered ids pass, so
they are public API, in the spirit of Gymnasium's ``check_env`` and
PettingZoo's ``api_test``.

* :func:`check_tool_env`: a single-agent (``gym.make``) env.
* :func:`check_dialogue_env`: a PettingZoo AEC dialogue env.
* :func:`check_env`: either, by what the env is.

Both run one driver (:func:`agentenv.checks.checker.run_contract`): each kind
supplies only how it plays an episode and what differs (its library check,
its scripted actions, its turn-limit check).

Both raise :class:`EnvCheckError` (an ``AssertionError``) naming the check,
what failed and why it matters, and return a :class:`CheckReport`.
"""

from __future__ import annotations

from agentenv.checks.any_env import check_env
from agentenv.checks.contract import CheckReport, EnvCheckError
from agentenv.checks.dialogue_checker import DIALOGUE_CHECKS, check_dialogue_env
from agentenv.checks.env_checker import TOOL_CHECKS, check_tool_env

__all__ = [
    "DIALOGUE_CHECKS",
    "TOOL_CHECKS",
    "CheckReport",
    "EnvCheckError",
    "check_dialogue_env",
    "check_env",
    "check_tool_env",
]
