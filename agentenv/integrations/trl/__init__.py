"""agentenv envs inside TRL's ``GRPOTrainer`` / ``AsyncGRPOTrainer`` (checked with TRL 1.16.0).

Usage::

    factory = AgentEnvFactory("MediaSearch-v0", split="train", reward="efficient", seed=0)
    GRPOTrainer(..., train_dataset=dataset("MediaSearch-v0", "train"),
                environment_factory=factory, reward_funcs=factory.reward_func)

How TRL 1.16 drives an environment (``trl/trainer/grpo_trainer.py``, and the
spawned rollout worker of ``trl/experimental/async_grpo``):

* ``environment_factory`` is a zero-argument callable; TRL calls it for one
  instance per concurrent rollout and reuses instances across rollouts. The
  async trainer pickles it (with ``reward_funcs``) into a spawned process and
  calls tool methods from a thread pool.
* Every public function of the instance's *class* except ``reset`` and
  ``get_reward`` is a tool; its schema is ``transformers.utils.get_json_schema``
  of the bound method (signature and Google-style docstring). TRL calls the
  methods of one assistant message one after the other, with no sign of where a
  message ends.
* ``reset(**row)`` gets the dataset row; a string it returns is appended to the
  last prompt message.
* A rollout ends with the first assistant message that has no tool calls. That
  final text reaches reward functions only (``completions``), never the
  environment; ``get_reward()`` takes no arguments, so an env-owned reward
  cannot grade it.

What this adapter does with that:

* :class:`AgentEnvFactory` is a picklable, module-level factory. Each process
  builds one class per ``(env_id, kwargs)`` (cached) whose methods are the env's
  tools (:mod:`agentenv.integrations.tools_as_methods`); each instance owns its
  own env, nothing mutable is shared between instances.
* A tool method runs its call live in the instance's env, so the model reads
  exactly the output the env gives that call.
* The reward is :attr:`AgentEnvFactory.reward_func`, a reward function (not
  ``get_reward``): it replays the rollout's assistant messages into a referee
  env, one ``env.step`` per message, each message rendered as the ``llm`` eval
  agent renders it (:func:`message_action`). So parallel calls are one turn,
  the final ``<answer>…</answer>`` is graded by the env's own grader, and the
  reward is the episode return (the sum of every step's reward, shaping
  included): the same number ``agentenv eval`` computes for the same messages.
  A final message that is not an answer is the env's invalid last turn (the
  episode is truncated there: TRL gives no further turn).
* Tasks: a row's ``task_id`` (else ``index``, else a ``task`` dict) pins the
  task, looked up in the row's ``split`` (any split; the env's own by default).
  A row without a task (TRL's placeholder rows when there is no dataset) draws
  one per rollout from ``(seed, instance number, episode number)``. Each episode
  is reset with its own seed: the row's ``seed`` column, else one derived from
  ``(seed, task id)``, so every member of a GRPO group starts from the same state.

Nothing here imports TRL, torch or ``datasets`` at module level; :func:`dataset`
needs ``datasets`` and :func:`qwen3_tokenizer` needs TRL.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Mapping
from typing import Any

from agentenv.integrations.tools_as_methods import RESERVED_NAMES, tool_method
from agentenv.integrations.trl.data import checkpointing_option, dataset, qwen3_tokenizer
from agentenv.integrations.trl.episodes import (
    EPISODES_LOCK,
    REFEREES,
    EpisodeResult,
    env_class_name,
    make_episode_env,
    spec_key,
)
from agentenv.integrations.trl.episodes import EpisodeKey as EpisodeKey
from agentenv.integrations.trl.episodes import TaskOption as TaskOption
from agentenv.integrations.trl.episodes import task_positions as task_positions
from agentenv.integrations.trl.rewards import AgentEnvReward, message_action
from agentenv.integrations.trl.rollout_env import EPISODE_OVER as EPISODE_OVER
from agentenv.integrations.trl.rollout_env import LIVE_TURNS_PER_TURN as LIVE_TURNS_PER_TURN
from agentenv.integrations.trl.rollout_env import AgentEnvTRL

__all__ = [
    "AgentEnvFactory",
    "AgentEnvReward",
    "AgentEnvTRL",
    "EpisodeResult",
    "checkpointing_option",
    "dataset",
    "environment_factory",
    "message_action",
    "qwen3_tokenizer",
]


ENV_CLASSES: dict[str, type[AgentEnvTRL]] = {}
"""This process's env class per factory key (``spec_key(env_id, make_kwargs)``), built once."""


# ----------------------------------------------------------------------------- the factory
class AgentEnvFactory:
    """A picklable zero-argument callable for ``environment_factory``: each call is a new env instance.

    Args:
        env_id: a registered agentenv id.
        seed: base seed of task draws and episode seeds (None: drawn once, kept when pickled).
        **make_kwargs: passed to ``gym.make(env_id, ...)``: ``split`` (the split of rows that name
            none, and of drawn tasks; default ``train``), ``reward``, ``max_turns``, ...

    Pickling keeps ``env_id``, ``seed`` and ``make_kwargs`` only; the class and the envs are built in
    the process that calls the factory, one class per ``(env_id, make_kwargs)`` per process.
    """

    def __init__(self, env_id: str, *, seed: int | None = None, **make_kwargs: Any) -> None:
        self.env_id = env_id
        self.seed = int(seed) if seed is not None else secrets.randbits(32)
        self.make_kwargs = dict(make_kwargs)
        self._numbers = itertools.count()

    def __getstate__(self) -> dict[str, Any]:
        return {"env_id": self.env_id, "seed": self.seed, "make_kwargs": self.make_kwargs}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._numbers = itertools.count()

    def __repr__(self) -> str:
        kwargs = "".join(f", {k}={v!r}" for k, v in self.make_kwargs.items())
        return f"AgentEnvFactory({self.env_id!r}, seed={self.seed}{kwargs})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AgentEnvFactory) and self.__getstate__() == other.__getstate__()

    def __hash__(self) -> int:
        return hash(self.key)

    @property
    def key(self) -> str:
        return spec_key(self.env_id, self.make_kwargs)

    @property
    def name(self) -> str:
        """The env class's name, also the reward column's name."""
        return env_class_name(self.env_id)

    @property
    def env_class(self) -> type[AgentEnvTRL]:
        """This process's class for ``(env_id, make_kwargs)``: built once, then the same object."""
        key = self.key
        cls = ENV_CLASSES.get(key)
        if cls is None:
            with EPISODES_LOCK:
                cls = ENV_CLASSES.get(key)
                if cls is None:
                    cls = ENV_CLASSES[key] = _build_class(self.env_id, self.make_kwargs)
        return cls

    @property
    def reward_func(self) -> AgentEnvReward:
        """The reward function to pass as ``reward_funcs``: the env's episode return for each rollout
        (one object per factory, so its ``last_results`` can be read after a step)."""
        reward = self.__dict__.get("_reward")
        if reward is None:
            reward = self._reward = AgentEnvReward(self)
        return reward

    def __call__(self) -> AgentEnvTRL:
        return self.env_class(self, next(self._numbers))


def environment_factory(
    env_id: str, *, seed: int | None = None, **make_kwargs: Any
) -> AgentEnvFactory:
    """``AgentEnvFactory(env_id, seed=seed, **make_kwargs)``; pass its ``reward_func`` as ``reward_funcs``."""
    return AgentEnvFactory(env_id, seed=seed, **make_kwargs)


def _build_class(env_id: str, make_kwargs: Mapping[str, Any]) -> type[AgentEnvTRL]:
    probe = make_episode_env(env_id, make_kwargs)
    tools = probe.unwrapped.tools
    namespace: dict[str, Any] = {
        "__doc__": f"{env_id} for TRL: tools {', '.join(tools.names) or 'none'}; answer with <answer>…</answer>.",
        "__module__": __name__,
        "env_id": env_id,
    }
    for name in tools.names:
        if name in RESERVED_NAMES:
            raise ValueError(
                f"{env_id} has a tool named {name!r}, which TRL or the answer format reserves"
            )
        namespace[name] = tool_method(tools[name])
    REFEREES.setdefault(spec_key(env_id, make_kwargs), []).append(
        probe
    )  # the env read for the tools referees
    return type(env_class_name(env_id), (AgentEnvTRL,), namespace)
