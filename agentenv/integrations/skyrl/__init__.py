"""SkyRL-gym: every single-agent agentenv id as a SkyRL ``BaseTextEnv``, registered in skyrl-gym's registry.

SkyRL's generator makes a row's env with ``skyrl_gym.make(row["env_class"], env_config=...,
extras=row)``, calls ``init(prompt)`` for the opening conversation, then ``step(text)`` with each
model reply and appends the returned ``observations`` (OpenAI messages) to the chat until ``done``.
:func:`register_envs` registers ``agentenv/<id>`` for each single-agent id of every registered family
(read from the registry, so a new family needs no line here; lazy string entry points: nothing is
built until ``make``). The env class is :class:`agentenv.integrations.skyrl.envs.AgentenvTextEnv`,
told its id by the registered kwargs. A row's extras name the episode as ``agentenv prepare-verl``'s
``extra_info`` does (split, task index, seed; see :mod:`agentenv.integrations.row_episodes`).
``pip install agentenv[skyrl]``; ``docs/training-with-skyrl.md``.
"""

from __future__ import annotations

import importlib

PREFIX = "agentenv/"
"""A SkyRL env class name is this prefix and the agentenv id, e.g. ``agentenv/MediaSearch-v0``."""
ENTRY_POINT = "agentenv.integrations.skyrl.envs:AgentenvTextEnv"
"""The one ``BaseTextEnv`` subclass; its ``env_id`` keyword picks the agentenv id."""


def env_ids(*family_modules: str) -> dict[str, str]:
    """SkyRL name -> the id ``gym.make`` gets, for every single-agent id of every registered family.

    ``family_modules`` (e.g. ``"capitals.family"``) are imported first; the ids of the families they
    define are named ``module:Id``, as ``agentenv prepare-verl capitals.family:Capitals-v0`` writes
    them into rows, so a SkyRL worker imports the module before it makes the env.
    """
    from agentenv.families import Family, families

    qualified: dict[str, str] = {}
    for module in family_modules:
        for value in vars(importlib.import_module(module)).values():
            if isinstance(value, Family):
                qualified |= {spec.id: f"{module}:{spec.id}" for spec in value.envs}
    names: dict[str, str] = {}
    for family in families():
        for spec in family.envs:
            env_id = qualified.get(spec.id, spec.id)
            names[PREFIX + env_id] = env_id
    return names


def register_envs(*family_modules: str) -> list[str]:
    """Register every single-agent id with skyrl-gym (idempotent); returns the SkyRL names.

    Example (a family kept outside agentenv): ``register_envs("capitals.family")`` adds
    ``agentenv/capitals.family:Capitals-v0``.
    """
    import skyrl_gym

    names = env_ids(*family_modules)
    for name, env_id in names.items():
        if name not in skyrl_gym.registry:
            skyrl_gym.register(id=name, entry_point=ENTRY_POINT, kwargs={"env_id": env_id})
    return list(names)
