"""An agentenv env as a verl-tool tool server: ``agentenv serve-env --protocol verl-tool ENV_ID``.

verl-tool (TIGER-AI-Lab) trains tool-using agents on verl; its agent loop
sends each turn's action text to a tool server (``POST /get_observation``)
and appends the observation it gets back. This server is such a tool server
whose "tool" is a whole agentenv episode per trajectory id: the first action
of an id starts an episode (on the task its row's ``extra_info`` names), tool
calls return the env's tool output, and the final answer returns the graded
reward, the same as ``agentenv eval`` gives for the same text.

* :mod:`.protocol`: the request body, checked against the limits;
* :mod:`.app`: the ASGI app;
* :func:`create_app`: the app for an env id (or any env factory).

Example (``tests/integrations/test_serve_env_verl_tool.py`` runs this for real)::

    from agentenv.integrations.serve_env.runner import BackgroundServer
    from agentenv.integrations.verl_tool import create_app

    with BackgroundServer(create_app("MediaSearch-v0", split="test")) as server:
        ...  # POST server.url + "/get_observation"

Imports no server library until an app is built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentenv.integrations.serve_env.limits import EnvServerLimits
    from agentenv.integrations.verl_tool.app import VerlToolApp

__all__ = ["create_app"]


def create_app(
    env_id: str | None = None,
    *,
    split: str = "train",
    env_kwargs: Mapping[str, Any] | None = None,
    limits: EnvServerLimits | None = None,
    make: Callable[[str], Any] | None = None,
    info: Mapping[str, Any] | None = None,
) -> VerlToolApp:
    """The verl-tool app serving ``env_id`` (``gym.make(env_id, split=..., **env_kwargs)``), or ``make(split)``.

    ``split`` is the trajectories' split unless their ``extra_fields`` name another. A row
    written by ``agentenv prepare-verl`` must name ``env_id`` and, when ``env_kwargs`` is given
    (``None``: not checked), was written for the same kwargs.
    """
    from agentenv.integrations.serve_env.limits import EnvServerLimits
    from agentenv.integrations.serve_env.sessions import EnvPool, Trajectories, env_factory
    from agentenv.integrations.verl_tool.app import VerlToolApp

    limits = limits or EnvServerLimits()
    if make is None:
        if env_id is None:
            raise ValueError("create_app needs an env id or a make(split) factory")
        make = env_factory(env_id, env_kwargs or {})
    pool = EnvPool(make, max_idle=limits.max_live_envs)
    trajectories = Trajectories(
        pool, limits, default_split=split, env_id=env_id, env_kwargs=env_kwargs
    )
    return VerlToolApp(trajectories, {"env_id": env_id, "split": split, **(info or {})})
