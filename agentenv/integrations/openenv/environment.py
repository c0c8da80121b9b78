"""An agentenv env as an OpenEnv ``Environment``: one instance per OpenEnv session (WebSocket).

OpenEnv's server (``HTTPEnvServer``) calls the environment factory once per
session, ``reset(**data)`` and ``step(action)`` on it, and ``close()`` when the
session ends. This class takes a built env from the shared
:class:`~agentenv.integrations.serve_env.sessions.EnvPool` on its first reset
and gives it back on close.

Steps run inline on the server's event loop (``reset_async``/``step_async``
are overridden, so OpenEnv does not hop to a thread per step): an env step is
µs to a few ms of Python, shorter than a thread hand-off is worth, and no two
steps of one session can then overlap. They take turns per client
(:class:`~agentenv.integrations.serve_env.fair.FairTurns`, the client being the
session's peer address): a client with many sessions stepping at the limits
delays another client's step by one step, not by one step of each session.

Nothing an agent sends raises: text the env cannot parse is an error
observation (``valid=False``), a step before ``reset`` or after the episode
ended says so in the observation (``done=True``). A reset with bad start
fields raises :class:`~agentenv.integrations.serve_env.sessions.StartError`,
which the server answers as one JSON error naming the field.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from typing import Any

from openenv.core.env_server.interfaces import Environment

from agentenv.integrations.openenv.models import EpisodeState, TextAction, TextObservation
from agentenv.integrations.row_episodes import EpisodeSpec
from agentenv.integrations.serve_env.fair import CLIENT, FairTurns
from agentenv.integrations.serve_env.limits import EnvServerLimits
from agentenv.integrations.serve_env.sessions import (
    EnvPool,
    StartError,
    check_env_kwargs,
    start_from_fields,
)
from agentenv.integrations.serve_env.sessions import reset as reset_env

ROW_FIELDS = tuple(field.name for field in dataclasses.fields(EpisodeSpec))
"""The keys :meth:`AgentEnvEnvironment.reset` reads from a ``prepare-verl`` row beyond its named
parameters; any other key is refused (OpenEnv passes a request's every field to ``reset``)."""


class AgentEnvEnvironment(Environment[TextAction, TextObservation, EpisodeState]):
    """One session's env. Subclassed per server by :func:`environment_class` (OpenEnv calls the class)."""

    SUPPORTS_CONCURRENT_SESSIONS = True
    pool: EnvPool
    default_split: str
    limits: EnvServerLimits
    env_id: str | None = None
    env_kwargs: Mapping[str, Any] | None = None
    turns: FairTurns | None = None
    """The server's one schedule of steps per client (None: steps run as they come)."""

    def __init__(self) -> None:
        super().__init__()
        self._env: Any = None
        self._split: str | None = None
        self._state = EpisodeState(done=True)

    def reset(
        self,
        /,  # a client's field named "self" is an unknown field, not a second self
        seed: int | None = None,
        episode_id: str | None = None,
        index: int | None = None,
        task_id: str | None = None,
        split: str | None = None,
        **row: Any,
    ) -> TextObservation:
        """Start an episode: ``seed``, and ``index`` or ``task_id``, on ``split`` (as ``agentenv eval``).

        A row's fields (``agentenv prepare-verl``'s ``extra_info``: ``task_index`` and the rest)
        may be passed instead, as keyword arguments.
        """
        unknown = sorted(set(row).difference(ROW_FIELDS))
        if unknown:  # a field nothing reads: refused, not dropped (a misspelt 'index' would
            # otherwise start a seeded random task without a word)
            raise StartError(
                f"unknown reset field {unknown[0][:40]!r}"
                f"{f' (and {len(unknown) - 1} more)' if len(unknown) > 1 else ''}; reset takes "
                "seed, index or task_id, split and episode_id, or the fields of an agentenv "
                f"prepare-verl row ({', '.join(ROW_FIELDS)})"
            )
        fields = {"seed": seed, "index": index, "task_id": task_id, "split": split, **row}
        start = start_from_fields(
            {k: v for k, v in fields.items() if v is not None}, env_id=self.env_id
        )
        check_env_kwargs(start, self.env_kwargs)
        split = start.split or self.default_split
        if self._env is not None and split != self._split:
            self.close()
        if self._env is None:
            self._env = self.pool.take(split)  # a new env is frozen out of the collector's sight
            self._split = split
        obs, info = reset_env(self._env, start)
        self._state = EpisodeState(
            episode_id=episode_id or uuid.uuid4().hex,
            step_count=0,
            task_id=info.get("task_id"),
            split=split,
        )
        return TextObservation(
            text=obs,
            done=False,
            reward=None,
            task_id=info.get("task_id"),
            tools=list(info.get("tools") or []),
            messages=list(info.get("messages") or []),
        )

    def step(
        self, action: TextAction, timeout_s: float | None = None, **kwargs: Any
    ) -> TextObservation:
        """Step the episode with the agent's text; the env never raises on it."""
        state = self._state
        if self._env is None or state.done:
            why = (
                "no episode has started: send reset first"
                if self._env is None
                else "the episode has ended: send reset to start another"
            )
            return TextObservation(
                text=f"Error: {why}.",
                done=True,
                reward=0.0,
                valid=False,
                turn=state.step_count,
                parse_error=why,
            )
        obs, reward, terminated, truncated, info = self._env.step(action.text)
        state.step_count += 1
        state.total_reward += float(reward)
        if not (terminated or truncated) and state.step_count >= self.limits.max_turns:
            truncated = True
        done = bool(terminated or truncated)
        state.done = done
        return TextObservation(
            text=obs,
            done=done,
            reward=float(reward),
            turn=state.step_count,
            valid="parse_error" not in info,
            parse_error=info.get("parse_error"),
            truncated=bool(truncated) and not terminated,
            task_id=state.task_id,
            messages=list(info.get("messages") or []) if done else [],
            reward_components={
                k: float(v) for k, v in (info.get("reward_components") or {}).items()
            }
            if done
            else {},
        )

    async def reset_async(
        self,
        /,
        seed: int | None = None,
        episode_id: str | None = None,
        index: int | None = None,
        task_id: str | None = None,
        split: str | None = None,
        **row: Any,
    ) -> TextObservation:
        turns, client = self.turns, CLIENT.get()
        if turns is None:
            return self.reset(
                seed=seed, episode_id=episode_id, index=index, task_id=task_id, split=split, **row
            )
        await turns.acquire(client)
        try:
            return self.reset(
                seed=seed, episode_id=episode_id, index=index, task_id=task_id, split=split, **row
            )
        finally:
            turns.release()

    async def step_async(
        self, action: TextAction, timeout_s: float | None = None, **kwargs: Any
    ) -> TextObservation:
        turns = self.turns
        if turns is None:
            return self.step(action)
        client = CLIENT.get()
        await turns.acquire(client)
        try:
            return self.step(action)
        finally:
            turns.release()

    @property
    def state(self) -> EpisodeState:
        return self._state

    def close(self) -> None:
        """Give the env back to the pool (the session ended, or the split changed)."""
        if self._env is not None:
            self.pool.give(self._split or self.default_split, self._env)
            self._env = None
        self._state = EpisodeState(done=True)


def environment_class(
    pool: EnvPool,
    *,
    default_split: str,
    limits: EnvServerLimits,
    name: str = "AgentEnvEnvironment",
    env_id: str | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
) -> type[AgentEnvEnvironment]:
    """A subclass bound to ``pool``: OpenEnv's server calls it with no arguments, once per session."""
    return type(
        name,
        (AgentEnvEnvironment,),
        {
            "pool": pool,
            "default_split": default_split,
            "limits": limits,
            "env_id": env_id,
            "env_kwargs": env_kwargs,
            "turns": FairTurns(),
        },
    )
