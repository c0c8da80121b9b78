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

import os

from agentenv.registration import env_ids, register_envs

# In a source checkout envs/, corpora/ and baselines/ sit beside this folder, and setup.cfg's
# package_dir maps them into the package only for an install. Listing the checkout in __path__ lets
# Python's own path search find agentenv.envs, .corpora and .baselines when the package is imported
# from the checkout (``python -m pytest`` at its root, the strict editable install of the README),
# with no import hook for a folder named agentenv beside a script to shadow. In an installed wheel
# there is no setup.cfg beside the package, and this does nothing.
_CHECKOUT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
if os.path.isfile(os.path.join(_CHECKOUT, "setup.cfg")) and os.path.isfile(
    os.path.join(_CHECKOUT, "envs", "__init__.py")
):
    __path__.append(_CHECKOUT)

__version__ = "0.1.0"
__all__ = ["__version__", "env_ids", "register_envs"]

register_envs()
