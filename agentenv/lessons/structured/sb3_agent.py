"""The ``sb3`` agent: a policy trained on a structured env, played through the text harness.

``agentenv eval RareDiseaseDiagnosis-v0 --agent sb3 --agent-args path=runs/ppo``
scores a trained policy with the same runner, split handling and bootstrap
intervals as every other agent. The agent rebuilds the policy's view from the
text it is shown (the prompt, then each tool output) with the menu the policy
was trained on (named in ``model.json``), and answers with that menu's action
text. It never reads the task the harness hands it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agentenv.errors import UserInputError
from agentenv.evaluation.agents import UnsupportedEnv
from agentenv.evaluation.arguments import args_from_strings
from agentenv.lessons.structured.menu import Menu
from agentenv.lessons.structured.rl_extra import algorithm
from agentenv.lessons.structured.wrapper import all_menus


@dataclass
class SB3AgentArgs:
    """``--agent-args`` of the sb3 agent."""

    path: str = ""
    """A run directory written by training (``model.zip`` + ``model.json``), or its ``model.zip``."""
    deterministic: bool = False
    """Take the policy's most likely action instead of sampling it.

    Sampling is the default: a PPO/A2C policy is trained stochastic, and its most likely action
    can loop (a tool call whose repeat changes no feature) where the sampled policy answers.
    Samples come from the generator the harness gives each episode, so a run is reproducible.
    DQN has no action distribution and always takes its best action."""


def make_sb3_agent(**kwargs: Any) -> SB3Agent:
    """The ``sb3`` entry of the agent registry: ``--agent-args path=DIR [deterministic=false]``."""
    return SB3Agent(args_from_strings(SB3AgentArgs, kwargs))


def load_run(path: str | Path) -> tuple[Path, dict[str, Any]]:
    """The model file and metadata of a run directory (or of its ``model.zip``); errors name the fix."""
    if not str(path):
        raise UserInputError(
            "the sb3 agent needs path=RUN_DIR (a directory with model.zip and model.json); "
            "pass --agent-args path=..."
        )
    path = Path(path)
    run_dir = path.parent if path.suffix == ".zip" else path
    model, meta = run_dir / "model.zip", run_dir / "model.json"
    for needed in (model, meta):
        if not needed.is_file():
            raise UserInputError(
                f"path={path}: {needed} not found; point path at a directory written by "
                "agentenv.lessons.structured.training.train (or agentenv reproduce)"
            )
    data = json.loads(meta.read_text())
    menus = menus_for_run(data)
    if data.get("menu") not in menus:
        raise UserInputError(f"{meta}: unknown menu {data.get('menu')!r}; known: {sorted(menus)}")
    return model, data


def menus_for_run(meta: Mapping[str, Any]) -> dict[str, type[Menu]]:
    """Every registered menu by name, after importing the family of the run's env id (one kept outside agentenv too)."""
    env_id = meta.get("env_id")
    if isinstance(env_id, str) and env_id:
        from agentenv.families import family_of_env

        try:
            family_of_env(env_id)
        except UserInputError:
            pass  # the menu name decides below, with the known menus listed
    return all_menus()


class SB3Agent:
    """Plays a trained SB3 policy over the text env; see the module docstring."""

    name = "sb3"

    def __init__(self, args: SB3AgentArgs | None = None) -> None:
        self.args = args or SB3AgentArgs()
        model_path, self.meta = load_run(self.args.path)
        self.model = algorithm(self.meta["algo"]).load(model_path, device="cpu")
        self.menu: Menu = menus_for_run(self.meta)[self.meta["menu"]]()
        self._first = True
        self._rng = np.random.default_rng(0)

    def reset(
        self,
        obs: str,
        info: Mapping[str, Any],
        *,
        task: Any = None,
        rng: np.random.Generator | None = None,
    ) -> None:
        tools = {t["function"]["name"] for t in info.get("tools") or ()}
        menu = type(self.menu)
        if not menu.required_tools <= tools or (not menu.required_tools and tools):
            raise UnsupportedEnv(
                f"this policy was trained on {self.meta['env_id']} ({menu.name} menu, tools "
                f"{sorted(menu.required_tools) or 'none'}); this env offers tools {sorted(tools) or 'none'}"
            )
        self.menu.reset(obs, int(self.meta["max_turns"]))
        self._first = True
        self._rng = rng if rng is not None else np.random.default_rng(0)

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        if not self._first:
            self.menu.observe(obs)
        self._first = False
        features = self.menu.features()
        mask = self.menu.action_mask() if self.meta["algo"] == "maskable_ppo" else None
        if self.args.deterministic or not hasattr(self.model.policy, "get_distribution"):
            kwargs = {} if mask is None else {"action_masks": mask}
            action, _ = self.model.predict(features, deterministic=True, **kwargs)
        else:
            probs = action_probabilities(self.model, features, mask)
            action = self._rng.choice(probs.size, p=probs)
        return self.menu.act(int(action)).text


def action_probabilities(
    model: Any, features: np.ndarray, mask: np.ndarray | None = None
) -> np.ndarray:
    """The policy's probability of each menu entry for one feature vector (PPO/A2C); with ``mask`` (a
    policy trained with masks) the disallowed entries get probability 0, as ``MaskablePPO`` samples."""
    import torch

    obs, _ = model.policy.obs_to_tensor(features)
    with torch.no_grad():
        probs = (
            model.policy.get_distribution(obs)
            .distribution.probs[0]
            .cpu()
            .numpy()
            .astype(np.float64)
        )
    if mask is not None:
        probs = np.where(np.asarray(mask, dtype=bool), probs, 0.0)
    return probs / probs.sum()
