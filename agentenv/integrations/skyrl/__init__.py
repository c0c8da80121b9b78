"""SkyRL-gym: one ``BaseTextEnv`` subclass per agentenv id, registered in skyrl-gym's registry.

SkyRL's generator makes a row's env with ``skyrl_gym.make(row["env_class"], env_config=...,
extras=row)``, calls ``init(prompt)`` for the opening conversation, then ``step(text)`` with each
model reply and appends the returned ``observations`` (OpenAI messages) to the chat until ``done``.
:func:`register_envs` registers ``agentenv/<id>`` for each single-agent id (lazy string entry
points: nothing is built until ``make``); the classes live in :mod:`agentenv.integrations.skyrl.envs`.
A row's extras name the episode as ``agentenv prepare-verl``'s ``extra_info`` does (split, task index,
seed; see :mod:`agentenv.integrations.row_episodes`). ``pip install agentenv[skyrl]``;
``docs/training-with-skyrl.md``.
"""

from __future__ import annotations

ENV_CLASSES: dict[str, str] = {
    "MediaSearch-v0": "MediaSearchTextEnv",
    "MediaSearch-SingleTurn-v0": "MediaSearchSingleTurnTextEnv",
    "RareDiseaseDiagnosis-v0": "RareDiseaseDiagnosisTextEnv",
    "RareDiseaseDiagnosis-SingleTurn-v0": "RareDiseaseDiagnosisSingleTurnTextEnv",
}
"""agentenv id -> its ``BaseTextEnv`` subclass in :mod:`agentenv.integrations.skyrl.envs`."""
PREFIX = "agentenv/"
"""A SkyRL env class name is this prefix and the agentenv id, e.g. ``agentenv/MediaSearch-v0``."""


def register_envs() -> list[str]:
    """Register every agentenv id with skyrl-gym (idempotent); returns the SkyRL names."""
    import skyrl_gym

    names = []
    for env_id, cls in ENV_CLASSES.items():
        name = PREFIX + env_id
        if name not in skyrl_gym.registry:
            skyrl_gym.register(id=name, entry_point=f"agentenv.integrations.skyrl.envs:{cls}")
        names.append(name)
    return names
