"""The TRL reward function: each rollout's episode return, replayed in a referee env.

Why apart: grading is the env's own (one ``env.step`` per assistant message), and is
independent of how TRL drives the live env (:mod:`agentenv.integrations.trl.rollout_env`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agentenv.engine.actions import action_from_message
from agentenv.integrations.trl.episodes import (
    EPISODES_LOCK,
    REFEREES,
    EpisodeKey,
    EpisodeResult,
    FactorySpec,
    TaskOption,
    find_drawn,
    make_episode_env,
    pinned_task,
    split_tasks,
)
from agentenv.integrations.trl.rollout_env import AgentEnvTRL

__all__ = ["AgentEnvReward", "message_action"]


# ----------------------------------------------------------------------------- the reward
def message_action(message: Mapping[str, Any]) -> str:
    """The action text of one assistant message, rendered as the ``llm`` eval agent renders a reply:
    :func:`agentenv.engine.actions.action_from_message` in ``"native"`` mode (one function for both)."""
    return action_from_message(message, "native")


class AgentEnvReward:
    """TRL reward function: each rollout's episode return, as the env scores its assistant messages.

    Picklable (it holds the factory's settings only). For each rollout it finds the episode's
    task and seed (from ``environments`` when TRL passes them, else the row's ``task_id`` /
    ``index`` / ``split`` / ``seed`` columns, else the prompt text a drawn task was shown with),
    resets a referee env to that start and steps it once per assistant message of the completion.
    ``last_results`` holds the :class:`EpisodeResult` of the last call's rollouts.
    """

    def __init__(self, factory: FactorySpec) -> None:
        self.factory = factory
        self.__name__ = factory.name
        self.last_results: list[EpisodeResult | None] = []

    def __getstate__(self) -> dict[str, Any]:
        return {"factory": self.factory, "__name__": self.__name__, "last_results": []}

    def __repr__(self) -> str:
        return f"{self.factory!r}.reward_func"

    def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        environments: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        if environments is not None and len(environments) != len(completions):
            raise ValueError(
                f"{len(environments)} environments for {len(completions)} completions; TRL passes "
                "one env per rollout"
            )
        if prompts and len(prompts) != len(completions):
            raise ValueError(f"{len(prompts)} prompts for {len(completions)} completions")
        columns = {
            k: v for k, v in kwargs.items() if isinstance(v, list) and len(v) == len(completions)
        }
        results: list[EpisodeResult | None] = []
        for i, completion in enumerate(completions):
            env = environments[i] if environments is not None else None
            row = {k: v[i] for k, v in columns.items()}
            results.append(
                self._score(prompts[i] if prompts else None, completion, env, row, index=i)
            )
        self.last_results = results
        log_metric = kwargs.get("log_metric")
        scored = [r for r in results if r is not None]
        if callable(log_metric) and scored:
            for name in scored[0].components:
                log_metric(
                    f"{self.__name__}/{name}",
                    float(np.mean([r.components.get(name, 0.0) for r in scored])),
                )
        return [r.reward if r is not None else None for r in results]

    def _score(
        self, prompt: Any, completion: Any, env: Any, row: Mapping[str, Any], index: int = 0
    ) -> EpisodeResult | None:
        factory = self.factory
        if env is not None:
            if not isinstance(env, AgentEnvTRL) or env.env_id != factory.env_id:
                return None  # another environment's rollout (a dict environment_factory)
            if env.episode is None or env._task is None:
                raise RuntimeError("the rollout's env was never reset")
            task, key = env._task, env.episode
        else:
            pinned = pinned_task(factory, row)
            if pinned is not None:
                task, split, seed = pinned
                key = EpisodeKey(split=split, task_id=getattr(task, "id", ""), seed=seed)
            else:
                drawn = find_drawn(prompt)
                if drawn is None:
                    raise ValueError(
                        f"cannot tell which {factory.env_id} task this rollout played: give the rows a task_id "
                        "(agentenv.integrations.trl.dataset does), or pass the env instances as `environments`"
                    )
                key = EpisodeKey(*drawn)
                tasks, ids = split_tasks(factory, key.split)
                task = tasks[ids[key.task_id]]
        if isinstance(completion, str):  # a standard (text) dataset's completion
            messages: list[Any] = [{"role": "assistant", "content": completion}]
        elif isinstance(completion, list):  # a conversational one's: messages
            messages = completion
            for j, message in enumerate(messages):
                if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
                    raise ValueError(
                        f"completions[{index}][{j}]: a message is an object with a 'role', got "
                        f"{type(message).__name__}"
                    )
        else:  # str() of a tuple or a tool message was graded as the answer
            raise ValueError(
                f"completions[{index}]: a completion is a string or a list of messages, got "
                f"{type(completion).__name__}"
            )
        result = _replay(factory, task, key, [m for m in messages if m["role"] == "assistant"])
        if isinstance(env, AgentEnvTRL):
            env.result = result
        return result


def _replay(
    factory: FactorySpec, task: TaskOption, key: EpisodeKey, turns: Sequence[Mapping[str, Any]]
) -> EpisodeResult:
    """Step a referee env once per assistant message; the last one ends the episode (answer or truncation)."""
    with EPISODES_LOCK:
        pool = REFEREES.setdefault(factory.key, [])
        env = pool.pop() if pool else None
    if env is None:
        env = make_episode_env(factory.env_id, factory.make_kwargs)
    inner = env.unwrapped
    budget = inner.max_turns
    try:
        _, info = env.reset(seed=key.seed, options={"task": task})
        rewards: list[float] = []
        terminated = truncated = False
        actions = [message_action(m) for m in turns] or [""]
        for k, action in enumerate(actions):
            if (
                k == len(actions) - 1
            ):  # TRL gives no further turn: a non-answer is the last, invalid turn
                inner.max_turns = min(budget, info["turn"] + 1)
            _, reward, terminated, truncated, info = env.step(action)
            rewards.append(float(reward))
            if terminated or truncated:
                break
        return EpisodeResult(
            reward=float(sum(rewards)),
            step_rewards=tuple(rewards),
            components=dict(info["reward_components"]),
            terminated=bool(terminated),
            truncated=bool(truncated),
            task_id=info["task_id"],
            split=key.split,
            info=info,
        )
    finally:
        inner.max_turns = budget
        with EPISODES_LOCK:
            REFEREES.setdefault(factory.key, []).append(env)
