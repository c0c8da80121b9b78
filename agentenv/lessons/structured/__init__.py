"""Structured-action wrappers over the text envs, and classic RL on them (Stable-Baselines3).

Importing this package is light: the wrappers need only gymnasium and numpy.
Training (:mod:`agentenv.lessons.structured.training`), the ``sb3`` eval agent and
the lessons import stable-baselines3, torch and matplotlib when they run
(``pip install -e ".[rl]"``). See ``docs/structured.md``.
"""

from agentenv.lessons.structured.menu import Choice, Menu
from agentenv.lessons.structured.wrapper import (
    StructuredEnv,
    all_menus,
    family_menus,
    make_structured,
    menu_for,
)

__all__ = [
    "Choice",
    "Menu",
    "StructuredEnv",
    "all_menus",
    "family_menus",
    "make_structured",
    "menu_for",
]
