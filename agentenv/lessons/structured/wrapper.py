"""``StructuredEnv``: a text env as a standard Gymnasium env with a ``Discrete`` menu and ``Box`` features.

Why a wrapper and not a new env: the text env underneath does all stepping
and grading, so a structured policy is scored exactly as an LLM would be:
the reward and ``info["reward_components"]`` are the text env's, unchanged,
and ``info`` keeps the whole text transcript (``info["messages"]``) plus the
action text and menu label of the step (``info["structured"]``).

The menu (:mod:`agentenv.lessons.structured.menu`) is chosen from the env's family
(its ``Family.structured`` part, reached through the registry) and the tools
the env offers, and reads only the observation text; see
``docs/structured.md`` for each menu and feature.

Example:
    >>> env = make_structured("RareDiseaseDiagnosis-SingleTurn-v0")
    >>> env.action_space, env.observation_space.shape
    (Discrete(10), (7,))
    >>> obs, info = env.reset(seed=0)
    >>> _, reward, terminated, _, info = env.step(1)   # "answer top 3"
    >>> terminated, info["structured"]["label"], info["reward_components"]["n_predictions"]
    (True, 'answer top 3', 3.0)
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from agentenv.errors import UserInputError
from agentenv.families import Family, families, family_of_env, resolve
from agentenv.lessons.structured.menu import Menu


def family_menus(family: Family) -> tuple[type[Menu], ...]:
    """The menus a family declares in its ``structured`` part; a family without one is refused by name."""
    if family.structured is None:
        raise UserInputError(
            f"no structured menu for family {family.name!r}: its Family record sets no 'structured' field. "
            "Declare structured='yourpkg.module:MENUS' (a tuple of agentenv.lessons.structured.Menu subclasses); "
            "see docs/structured.md and examples/capitals/structured.py"
        )
    menus = tuple(resolve(family.structured))
    if not menus or not all(isinstance(m, type) and issubclass(m, Menu) for m in menus):
        raise UserInputError(
            f"family {family.name!r}: 'structured' must name a non-empty sequence of agentenv.lessons.structured.Menu "
            f"subclasses, got {family.structured!r}"
        )
    return menus


def all_menus() -> dict[str, type[Menu]]:
    """Every menu of every registered family, by name (what a trained policy's ``model.json`` names)."""
    return {m.name: m for f in families() if f.structured is not None for m in family_menus(f)}


def menu_for(family: str | Family, tool_names: set[str] | frozenset[str]) -> type[Menu]:
    """The menu class for a family and the tools its env offers; a clear error for anything else.

    A menu with ``required_tools`` plays an env that offers tools; one without plays a
    single-turn env (no tools). The first of the family's menus of the right kind is chosen.
    """
    from agentenv.families import get_family

    record = family if isinstance(family, Family) else get_family(family)
    menus = family_menus(record)
    menu = next((m for m in menus if bool(m.required_tools) == bool(tool_names)), None)
    if menu is None:
        kind = "with tools" if tool_names else "without tools (single-turn)"
        raise UserInputError(
            f"no structured menu for family {record.name!r} {kind}: its menus are {[m.name for m in menus]}"
        )
    missing = menu.required_tools - set(tool_names)
    if missing:
        raise UserInputError(
            f"the {menu.name} menu calls {sorted(menu.required_tools)}, but this env does not offer "
            f"{sorted(missing)}; keep the env's default tools (e.g. drop ranker_tool=False)"
        )
    return menu


class StructuredEnv(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """A registered single-agent text env with a menu action space and a feature observation space.

    ``action_space`` is ``Discrete(menu.size)``; ``observation_space`` is a
    float32 ``Box`` in [0, 1] with one entry per ``menu.feature_names``.
    """

    def __init__(self, env: gym.Env) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self
        )  # so that env.spec.make() rebuilds the wrapper (check_env does)
        gym.Wrapper.__init__(self, env)
        spec = env.spec
        if spec is None:
            raise UserInputError(
                "StructuredEnv wraps an env made with gym.make(id, ...), which has a spec; got none"
            )
        inner = env.unwrapped
        family = family_of_env(spec.id)
        self.family = family.name
        self.menu: Menu = menu_for(family, frozenset(inner.tools.names))()
        self.max_turns = int(getattr(inner, "max_turns", 1))
        self.action_space = gym.spaces.Discrete(self.menu.size)
        self.observation_space = gym.spaces.Box(
            0.0, 1.0, shape=(len(self.menu.feature_names),), dtype=np.float32
        )

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        self.menu.reset(obs, self.max_turns)
        return self.menu.features(), self._info(info, None)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        if not self.action_space.contains(np.int64(action) if np.isscalar(action) else action):
            raise ValueError(
                f"action {action!r} is outside the menu's action space {self.action_space}"
            )
        choice = self.menu.act(int(action))
        obs, reward, terminated, truncated, info = self.env.step(choice.text)
        self.menu.observe(obs)
        return self.menu.features(), reward, terminated, truncated, self._info(info, choice)

    def action_masks(self) -> np.ndarray:
        """The entries the menu allows now (``MaskablePPO`` reads this; see :meth:`Menu.action_mask`)."""
        return self.menu.action_mask()

    def _info(self, info: dict[str, Any], choice: Any) -> dict[str, Any]:
        out = dict(info)
        out["structured"] = {
            "menu": self.menu.name,
            "action_text": None if choice is None else choice.text,
            "label": None if choice is None else choice.label,
            "kind": None if choice is None else choice.kind,
            "n_answered": 0 if choice is None else choice.n_answered,
        }
        return out


def make_structured(env_id: str, **kwargs: Any) -> StructuredEnv:
    """``StructuredEnv(gym.make(env_id, **kwargs))``; kwargs go to the text env (``split``, ``reward``, ...)."""
    import agentenv  # noqa: F401 - registers the ids

    return StructuredEnv(gym.make(env_id, **kwargs))
