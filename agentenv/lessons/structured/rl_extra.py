"""The ``rl`` extra, imported when training or evaluating a policy, with one clear message when it is missing.

Why: ``import agentenv`` and the wrappers must stay light (no torch), so
stable-baselines3 and torch are imported only here, on first use.
"""

from __future__ import annotations

from types import ModuleType

INSTALL_HINT = (
    'pip install -e ".[rl]"  (stable-baselines3==2.9.2, sb3-contrib==2.9.2 and torch==2.13.0)'
)


class MissingRLExtra(ImportError):
    """stable-baselines3 or torch is not installed; the message says how to install them."""


def sb3() -> ModuleType:
    """The ``stable_baselines3`` module, with torch limited to one thread (2-core machines; bit-stable runs)."""
    try:
        import stable_baselines3
        import torch
    except ImportError as err:
        raise MissingRLExtra(
            f"training and the sb3 agent need the rl extra: {INSTALL_HINT} ({err})"
        ) from err
    torch.set_num_threads(1)
    return stable_baselines3


ALGORITHMS = ("maskable_ppo", "ppo", "a2c", "dqn")
"""``maskable_ppo`` is sb3-contrib's ``MaskablePPO``: PPO that samples only the entries the menu allows."""


def algorithm(name: str) -> type:
    """The algorithm class for ``maskable_ppo``, ``ppo``, ``a2c`` or ``dqn``."""
    module = sb3()
    if name == "maskable_ppo":
        try:
            from sb3_contrib import MaskablePPO
        except ImportError as err:
            raise MissingRLExtra(
                f"maskable_ppo needs sb3-contrib from the rl extra: {INSTALL_HINT} ({err})"
            ) from err
        return MaskablePPO
    classes = {"ppo": module.PPO, "a2c": module.A2C, "dqn": module.DQN}
    if name not in classes:
        raise ValueError(f"algo must be one of {list(ALGORITHMS)}, got {name!r}")
    return classes[name]
