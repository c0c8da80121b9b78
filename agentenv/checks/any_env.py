"""``check_env``: check any agentenv env, single-agent or dialogue, by what it is.

Why its own module: it imports both checkers, and both import the driver
(:mod:`agentenv.checks.checker`), so the dispatch cannot live beside the driver
without an import circle.

Example:
    >>> import gymnasium as gym, agentenv
    >>> check_env(gym.make("MediaSearch-SingleTurn-v0")).checks[:2]
    ('gymnasium', 'info_keys')
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from agentenv.checks.contract import CheckReport
from agentenv.checks.dialogue_checker import check_dialogue_env
from agentenv.checks.env_checker import check_tool_env

__all__ = ["check_env"]


def check_env(env: Any, **kwargs: Any) -> CheckReport:
    """Check any agentenv env: a Gymnasium env with :func:`~agentenv.checks.check_tool_env`, a
    PettingZoo AEC dialogue with :func:`~agentenv.checks.check_dialogue_env`; ``kwargs`` go to it."""
    if isinstance(env, gym.Env):
        return check_tool_env(env, **kwargs)
    return check_dialogue_env(env, **kwargs)
