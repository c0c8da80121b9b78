"""The Parallel version of a dialogue: PettingZoo's turn-based conversion, with ``active_agent`` in every info.

Why turn-based: PettingZoo's ``aec_to_parallel`` steps every agent once per
cycle with actions chosen at the same time, so the patient would reply before
reading the doctor's question, and the doctor could not call tools several
times in a row. ``turn_based_aec_to_parallel`` fits a dialogue: each parallel
step takes an action for every live agent and applies only the one of the
agent whose turn it is; the others are ignored.

Why a subclass: the caller must know whose action counts, and PettingZoo 1.27
names it in ``info["active_agent"]`` only after a step that leaves agents in
play: not at reset, and not on the last step. :class:`TurnBasedParallel` puts
it in every info it returns:

* at reset: the first speaker (``doctor``, ``user``);
* after a step: the agent whose action the next step applies;
* on the step that ends the dialogue: ``None`` (no step follows).

It also returns PettingZoo's five dicts (empty) when stepped after the end,
where the base class returns four. The infos are new dicts: the AEC env's own
``infos`` are never written to.
"""

from __future__ import annotations

from typing import Any

from pettingzoo.utils.conversions import turn_based_aec_to_parallel_wrapper

__all__ = ["TurnBasedParallel"]


class TurnBasedParallel(turn_based_aec_to_parallel_wrapper):
    """``turn_based_aec_to_parallel_wrapper`` with ``info["active_agent"]`` at reset and on every step."""

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict, dict]:
        observations, infos = super().reset(seed=seed, options=options)
        return observations, self._with_active(infos)

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        if not self.agents:
            return {}, {}, {}, {}, {}
        aec = self.aec_env
        aec.step(actions[aec.agent_selection])
        rewards = dict(aec.rewards)
        terminations = dict(aec.terminations)
        truncations = dict(aec.truncations)
        infos = dict(aec.infos)
        observations = {agent: aec.observe(agent) for agent in aec.agents}
        while aec.agents and (
            aec.terminations[aec.agent_selection] or aec.truncations[aec.agent_selection]
        ):
            aec.step(None)  # the done agents leave; nothing else changes
        self.agents = list(aec.agents)
        return observations, rewards, terminations, truncations, self._with_active(infos)

    def _with_active(self, infos: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Copies of ``infos`` naming the agent whose action the next step applies (``None`` at the end)."""
        active = self.aec_env.agent_selection if self.aec_env.agents else None
        return {agent: {**info, "active_agent": active} for agent, info in infos.items()}
