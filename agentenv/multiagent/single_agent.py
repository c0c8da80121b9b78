"""Turn a dialogue into a Gymnasium env for one agent, with the other agents played by policies.

Why: most training code expects ``gymnasium.Env[str, str]``. Fixing all
agents but one gives exactly that, and the fixed agents can be the scripted
simulators (the default), an LLM behind an endpoint (the ``llm`` agent), or
any callable ``(observation, info) -> str``. So the same doctor can be
trained against the scripted patient and evaluated against an LLM patient.

Each ``step`` sends the action to the AEC env, then lets the other agents act
until it is this agent's turn again or the dialogue ends; the reward is what
this agent earned meanwhile (PettingZoo's cumulative reward). A dialogue that
the other agents end before this agent's first turn (a doctor that answers
without asking, seen from the patient) is skipped: ``reset`` draws the next
task with the env's generator, so runs still repeat. A policy with a
``reset(obs, info, *, task, rng)`` method is reset at each episode start with
a generator derived from the env's seed, so runs repeat.

Example (not run: it builds an env):

    env = as_single_agent(make("DiagnosisDialogue-v0"), agent="doctor")
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step("<say>Do you have seizures?</say>")
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from agentenv.multiagent.base import DialogueEnv
from agentenv.multiagent.policy_helpers import PolicyLike, act_with

MAX_SKIPPED = 100
"""Dialogues in a row that may end before this agent's first turn (then ``reset`` raises)."""


class SingleAgentDialogue(gym.Env[str, str]):
    """One agent of a :class:`~agentenv.multiagent.base.DialogueEnv`; the others follow ``others``."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"]}

    def __init__(
        self, aec_env: DialogueEnv, agent: str, others: Mapping[str, PolicyLike] | None = None
    ) -> None:
        if agent not in aec_env.possible_agents:
            raise ValueError(f"agent must be one of {aec_env.possible_agents}, got {agent!r}")
        others = dict(others or {})
        unknown = set(others) - set(aec_env.possible_agents) - {agent}
        if unknown or agent in others:
            raise ValueError(
                f"others must name the other agents {[a for a in aec_env.possible_agents if a != agent]}, "
                f"got {sorted(others)}"
            )
        self.aec_env, self.agent = aec_env, agent
        self.others: dict[str, PolicyLike] = {
            a: others[a] if a in others else aec_env.default_policy(a)
            for a in aec_env.possible_agents
            if a != agent
        }
        self.observation_space = aec_env.observation_space(agent)
        self.action_space = aec_env.action_space(agent)
        self.render_mode = aec_env.render_mode
        self.metadata = {**aec_env.metadata, "render_modes": list(aec_env.metadata["render_modes"])}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        env = self.aec_env
        for attempt in range(MAX_SKIPPED):
            env.reset(seed=seed if attempt == 0 else None, options=options)
            for name, policy in self.others.items():
                reset = getattr(policy, "reset", None)
                if callable(reset):
                    rng = np.random.default_rng(self.np_random.integers(2**63 - 1))
                    reset(env.observe(name), env.infos[name], task=env.task, rng=rng)
            obs, _, terminated, truncated, info = self._advance()
            if not (terminated or truncated):
                return obs, info
            if options:
                break
        raise RuntimeError(
            f"the {self.agent} got no turn: the other agents ended the dialogue first"
            + (" in the pinned task" if options else f" in {MAX_SKIPPED} dialogues in a row")
        )

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        env = self.aec_env
        if (
            not env.agents
            or env.agent_selection != self.agent
            or env.terminations[self.agent]
            or env.truncations[self.agent]
        ):
            raise RuntimeError("call reset() before step(), and again after an episode ends")
        env.step(action)
        return self._advance()

    def _advance(self) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Let the other agents act until this agent must act or the dialogue is over."""
        env = self.aec_env
        while env.agents and env.agent_selection != self.agent:
            name = env.agent_selection
            obs, _, terminated, truncated, info = env.last()
            env.step(None if terminated or truncated else act_with(self.others[name], obs, info))
        obs, reward, terminated, truncated, info = env.last()
        return str(obs), float(reward), bool(terminated), bool(truncated), dict(info)

    def render(self) -> str | None:
        return self.aec_env.render()

    @property
    def task(self) -> Any:
        """The current task (gold included): for harnesses and privileged scripts only."""
        return self.aec_env.task


def as_single_agent(
    aec_env: DialogueEnv, agent: str | None = None, others: Mapping[str, PolicyLike] | None = None
) -> SingleAgentDialogue:
    """A Gymnasium env for ``agent`` (default: the lead) with ``others`` playing the rest (default: scripted)."""
    return SingleAgentDialogue(aec_env, agent or aec_env.lead, others)
