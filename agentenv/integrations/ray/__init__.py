"""Ray: ``agentenv eval --ray``, token-exact rollouts on actors, and a retrieval index shared as a service.

Importing this package imports no Ray (it is the optional ``ray`` extra);
each name below is loaded on first use, and a missing Ray is a one-line
error naming ``pip install -e ".[ray]"``. See ``docs/distributed.md``.

* :mod:`~agentenv.integrations.ray.cluster`: ``connect`` (local, auto or an address), ``require_ray``;
* :mod:`~agentenv.integrations.ray.dispatch`: chunks of episodes on actors that may die;
* :mod:`~agentenv.integrations.ray.evaluation`: ``run_on_ray``, ``RayEvaluation``, ``RunIncomplete``;
* :mod:`~agentenv.integrations.ray.rollouts`: ``RolloutPool``, ``Rollout``, ``trl_fields`` (TRL's ``rollout_func``);
* :mod:`~agentenv.integrations.ray.policies`: ``AgentPolicy``, ``EndpointPolicy``, ``TokenPolicy``;
* :mod:`~agentenv.integrations.ray.retrieval`: ``start_retrieval_service``, ``RetrievalService``.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "connect": "cluster",
    "require_ray": "cluster",
    "run_on_ray": "evaluation",
    "RayEvaluation": "evaluation",
    "RunIncomplete": "evaluation",
    "RolloutPool": "rollouts",
    "Rollout": "rollouts",
    "trl_fields": "rollouts",
    "AgentPolicy": "policies",
    "EndpointPolicy": "policies",
    "TokenPolicy": "policies",
    "start_retrieval_service": "retrieval",
    "RetrievalService": "retrieval",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
