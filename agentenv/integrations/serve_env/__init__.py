"""One env id served over HTTP to a trainer's own client: the parts every protocol shares.

``agentenv serve-env --protocol verl-tool|openenv ENV_ID`` serves an env to
trainers that step environments through a server (verl-tool's tool server,
OpenEnv's HTTP/WebSocket env server, which TRL also reads). Each protocol has
its own package (:mod:`agentenv.integrations.verl_tool`,
:mod:`agentenv.integrations.openenv`); this one holds what they share:

* :mod:`.limits`: :class:`~.limits.EnvServerLimits`, every bound in one place;
* :mod:`.sessions`: trajectories, each owning one env instance (created on
  first sight, closed on finish, evicted when idle, capped), and the pool of
  built envs they reuse;
* :mod:`.runner`: uvicorn behind the retrieval server's connection guard
  (:mod:`agentenv.retrieval.connections`), loopback by default, in this
  process or in a background thread;
* :mod:`.cli`: the ``serve-env`` sub-command.

Importing this package imports no server library.
"""
