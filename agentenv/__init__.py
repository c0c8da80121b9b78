"""agentenv: Gymnasium environments for tool-using LLM agents.

Importing the package registers every env id with Gymnasium and builds
nothing: corpora and indexes are built on the first ``gym.make``.

Example:
    >>> import gymnasium as gym
    >>> import agentenv
    >>> "MediaSearch-v0" in gym.registry
    True
"""

from __future__ import annotations

from agentenv.registration import env_ids, register_envs

__version__ = "0.1.0"
__all__ = ["__version__", "env_ids", "register_envs"]

register_envs()
