"""Policies for :class:`~agentenv.integrations.ray.rollouts.RolloutPool`: what picks the next token ids.

A policy is any picklable callable ``policy(input_ids, info) -> action``:
``input_ids`` is the trajectory so far (prompt, sampled and env ids, ending
with the assistant header), ``info`` the step's info, and ``action`` the
sampled ids, or ``{"token_ids": [...], "logprobs": [...]}`` to keep the
sampler's logprobs. It is pickled once per actor. If it has a ``begin``
method, ``begin(info, *, task, rng, template)`` is called at each reset with
the episode's own generator (seeded from the pool's seed and the episode
number), so sampling repeats for a repeated seed.

Two ready-made ones:

- :class:`EndpointPolicy`: an OpenAI-compatible server (vLLM, SGLang), asked
  through the registry's ``llm`` agent on its completions endpoint with the
  trajectory's own ids as the prompt, so the episode is token-exact;
- :class:`AgentPolicy`: any registered text agent (``oracle``, ``bm25``), its
  action text encoded with the template and closed with the end-of-turn id:
  scripted trajectories, e.g. for SFT warm-up or for testing a trainer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from agentenv.core import Task
from agentenv.evaluation.agents import Agent, make_agent


@runtime_checkable
class TokenPolicy(Protocol):
    """The interface a rollout policy fills (``begin`` is optional)."""

    def __call__(self, input_ids: Sequence[int], info: Mapping[str, Any]) -> Any:
        """The ids sampled after ``input_ids`` (or a ``{"token_ids", "logprobs"}`` mapping)."""
        ...


class AgentPolicy:
    """A registered text agent as a token policy: its text, encoded, then the template's end-of-turn id.

    Privileged agents (``oracle``) read the task, which ``begin`` is handed; the
    env's text observation arrives in ``info["observation"]``.
    """

    def __init__(self, agent: str, **agent_args: str) -> None:
        self.agent_name = agent
        self.agent_args = dict(agent_args)
        self._agent: Agent | None = None
        self._template: Any = None

    def begin(
        self, info: Mapping[str, Any], *, task: Task, rng: np.random.Generator, template: Any
    ) -> None:
        if self._agent is None:
            self._agent = make_agent(self.agent_name, **self.agent_args)
        self._template = template
        self._agent.reset(str(info.get("observation", "")), info, task=task, rng=rng)

    def __call__(self, input_ids: Sequence[int], info: Mapping[str, Any]) -> list[int]:
        if self._agent is None:
            raise RuntimeError("begin() before the first action")
        text = self._agent.act(str(info.get("observation", "")), info)
        return list(self._template.encode(text)) + [self._template.eos_ids[0]]


class EndpointPolicy:
    """An OpenAI-compatible completions endpoint that continues the trajectory's ids.

    ``agent_args`` are the ``llm`` agent's (``temperature``, ``max_tokens``,
    ``timeout_s``, ``retries``, ...). A server that fails after the agent's
    retries raises :class:`~agentenv.evaluation.agents.AgentFailure`; the pool
    then ends that rollout and records the reason in ``Rollout.failure``.
    """

    def __init__(self, base_url: str, model: str, **agent_args: Any) -> None:
        self.base_url = base_url
        self.model = model
        self.agent_args = {k: str(v) for k, v in agent_args.items()}
        self._agent: Any = None
        self._stop: list[int] = []

    def begin(
        self, info: Mapping[str, Any], *, task: Task, rng: np.random.Generator, template: Any
    ) -> None:
        if self._agent is None:
            self._agent = make_agent(
                "llm", base_url=self.base_url, model=self.model, **self.agent_args
            )
        self._stop = list(template.eos_ids)
        self._agent.reset("", info, rng=rng)

    def __call__(self, input_ids: Sequence[int], info: Mapping[str, Any]) -> Any:
        sampled = self._agent.complete_ids(list(input_ids), self._stop)
        if sampled.logprobs:
            return {"token_ids": sampled.token_ids, "logprobs": sampled.logprobs}
        return sampled.token_ids
