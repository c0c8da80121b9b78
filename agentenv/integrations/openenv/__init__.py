"""An agentenv env as an OpenEnv environment server: ``agentenv serve-env --protocol openenv ENV_ID``.

OpenEnv (``openenv-core``) is the env protocol TRL and other trainers read: a
server holds one env per WebSocket session and answers ``reset``/``step``/``state``
messages; each env ships a typed client. Here OpenEnv's own server classes
(``create_fastapi_app``, ``HTTPEnvServer``) serve any agentenv id:

* :mod:`.models`: ``TextAction`` (the agent's text), ``TextObservation``, ``EpisodeState``;
* :mod:`.environment`: the OpenEnv ``Environment`` over a pooled agentenv env;
* :mod:`.client`: ``AgentEnvClient``, OpenEnv's ``EnvClient`` for these types
  (OpenEnv's ``GenericEnvClient`` works too, with plain dicts);
* :mod:`.app`: the hardened app (:func:`create_app`).

``reset`` takes ``seed``, and ``index`` or ``task_id``, and ``split``: the same
episode as ``agentenv eval`` plays for them. Needs the ``openenv`` extra.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentenv.integrations.openenv.app import Hardened
    from agentenv.integrations.serve_env.limits import EnvServerLimits

__all__ = ["create_app"]

_EXTRA_HINT = "the OpenEnv server needs the 'openenv' extra: pip install 'agentenv[openenv]'"


def create_app(
    env_id: str | None = None,
    *,
    split: str = "train",
    env_kwargs: Mapping[str, Any] | None = None,
    limits: EnvServerLimits | None = None,
    make: Callable[[str], Any] | None = None,
) -> Hardened:
    """The OpenEnv app serving ``env_id`` (``gym.make(env_id, split=..., **env_kwargs)``), or ``make(split)``.

    Raises:
        ImportError: without the ``openenv`` extra (the message names it).
    """
    try:
        import openenv.core  # noqa: F401
    except ImportError as exc:
        raise ImportError(_EXTRA_HINT) from exc
    from agentenv.integrations.openenv.app import build_app
    from agentenv.integrations.openenv.environment import environment_class
    from agentenv.integrations.serve_env.limits import EnvServerLimits
    from agentenv.integrations.serve_env.sessions import EnvPool, env_factory

    limits = limits or EnvServerLimits()
    if make is None:
        if env_id is None:
            raise ValueError("create_app needs an env id or a make(split) factory")
        make = env_factory(env_id, env_kwargs or {})
    pool = EnvPool(make, max_idle=limits.max_live_envs)
    name = "".join(ch for ch in (env_id or "Custom") if ch.isalnum()) + "Environment"
    environment = environment_class(
        pool, default_split=split, limits=limits, name=name, env_id=env_id, env_kwargs=env_kwargs
    )
    return build_app(environment, limits)
