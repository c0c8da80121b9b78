"""Episodes named by a trainer's data row: which env, split, task and seed, and envs to play them on.

Why one module: verl, SkyRL-gym and verifiers all train on rows of a data set and build an env per
row. Each row must replay the episode ``agentenv eval`` plays for the same ``--seed``: episode ``i``
resets with ``seed + i`` on the task at index ``episode_plan(...)[i]``. :func:`episode_rows` writes
those rows' fields; :class:`EpisodeSpec` reads them back; :class:`EnvPool` lends envs (building one
takes up to a second, so they are reused, one per episode in flight).

Example:
    >>> spec = EpisodeSpec.from_fields({"env_id": "MediaSearch-v0", "split": "test", "task_index": 3,
    ...                                 "seed": 10, "task_id": "t", "env_kwargs": "{}"})
    >>> spec.reset_kwargs()
    {'seed': 10, 'options': {'index': 3}}
"""

from __future__ import annotations

import json
import operator
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from agentenv.errors import UserInputError

FIELDS = ("env_id", "split", "task_index", "task_id", "seed", "episode", "env_kwargs")
"""What a row carries about its episode (``env_kwargs`` as a JSON object string, so columnar formats keep it)."""


@dataclass(frozen=True)
class EpisodeSpec:
    """One episode: reset ``env_id`` (on ``split``, with ``env_kwargs``) with ``seed`` on the task at ``task_index``."""

    env_id: str
    split: str
    task_index: int
    seed: int
    task_id: str = ""
    """The task's id as written; checked after reset, so rows made for other tasks fail loudly."""
    episode: int = 0
    env_kwargs: tuple[tuple[str, Any], ...] = field(default=())

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any], *, env_id: str | None = None) -> EpisodeSpec:
        """Read a row's fields (``extra_info`` in verl, the extras in SkyRL, ``info`` in verifiers)."""
        missing = [k for k in ("split", "task_index", "seed") if k not in fields]
        if env_id is None and "env_id" not in fields:
            missing.insert(0, "env_id")
        if missing:
            raise UserInputError(
                f"the row's episode fields lack {', '.join(missing)}: write rows with "
                "`agentenv prepare-verl` (or agentenv.integrations.row_episodes.episode_rows)"
            )
        return cls(
            env_id=_text(fields, "env_id", env_id, lambda v: 0 < len(v) <= 200, "an env id"),
            split=_text(fields, "split", None, str.isidentifier, "a split name such as 'test'"),
            task_index=_natural(fields, "task_index"),
            seed=_natural(fields, "seed"),
            task_id=_text(
                fields, "task_id", "", lambda v: len(v) <= 200, "a task id (0-200 characters)"
            ),
            episode=_natural(fields, "episode", 0),
            env_kwargs=tuple(
                sorted(_without_split(row_env_kwargs(fields.get("env_kwargs"))).items())
            ),
        )

    def fields(self) -> dict[str, Any]:
        """The row fields that :meth:`from_fields` reads back."""
        return {
            "env_id": self.env_id,
            "split": self.split,
            "task_index": self.task_index,
            "task_id": self.task_id,
            "seed": self.seed,
            "episode": self.episode,
            "env_kwargs": json.dumps(dict(self.env_kwargs)),
        }

    def reset_kwargs(self) -> dict[str, Any]:
        """What ``env.reset`` gets: the evaluation runner's seed and task index for this episode."""
        return {"seed": self.seed, "options": {"index": self.task_index}}

    def check_task(self, info: Mapping[str, Any]) -> None:
        """Fail when the env served a task other than the row's (rows written for another task file or version)."""
        if self.task_id and info.get("task_id") != self.task_id:
            raise UserInputError(
                f"{self.env_id} {self.split} task {self.task_index} is {info.get('task_id')!r}, "
                f"the row says {self.task_id!r}: rewrite the rows for these tasks"
            )


def describe_value(value: object) -> str:
    """A value as an error names it: its type, and its repr when short (``int -1``, ``list``)."""
    text = repr(value)
    return type(value).__name__ if len(text) > 40 else f"{type(value).__name__} {text}"


def _natural(fields: Mapping[str, Any], name: str, default: int | None = None) -> int:
    """A row's non-negative integer field (numpy integers too: rows come back from columnar files)."""
    value = fields.get(name)
    if value is None and default is not None:
        return default
    try:
        if isinstance(value, bool):
            raise TypeError
        number = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        number = -1
    if not 0 <= number < 2**63:
        raise UserInputError(
            f"the row's {name!r} must be a non-negative integer, got {describe_value(value)}"
        )
    return number


def _text(
    fields: Mapping[str, Any],
    name: str,
    given: str | None,
    valid: Any,
    what: str,
) -> str:
    """A row's string field (``given`` when the caller names it and the row does not; None: required)."""
    value = fields.get(name, given)
    if value is None and given is not None:
        value = given
    if not isinstance(value, str) or not valid(value):
        raise UserInputError(f"the row's {name!r} must be {what}, got {describe_value(value)}")
    return value


def _without_split(kwargs: dict[str, Any]) -> dict[str, Any]:
    """A row's env kwargs, which may not name the split: the row's ``split`` field does (a row
    whose env_kwargs said train beside split test played a train task as a test episode)."""
    if "split" in kwargs:
        raise ValueError(
            "the row's 'env_kwargs' names 'split'; the row's own 'split' field sets it: remove it"
        )
    return kwargs


def row_env_kwargs(raw: Any) -> dict[str, Any]:
    """A row's ``env_kwargs``: a JSON object as text (what :meth:`EpisodeSpec.fields` writes) or an object."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError as err:
            raise UserInputError(
                f"the row's 'env_kwargs' is not valid JSON ({err}); expected a JSON object such as "
                '\'{"mode": "single_turn"}\''
            ) from None
    if not isinstance(raw, Mapping) or not all(isinstance(k, str) for k in raw):
        raise UserInputError(
            f"the row's 'env_kwargs' must be a JSON object of keyword arguments, got {describe_value(raw)}"
        )
    return dict(raw)


class EnvPool:
    """Envs lent one episode at a time, kept per (id, split, kwargs); thread-safe."""

    def __init__(self) -> None:
        self._free: dict[tuple[Any, ...], list[gym.Env]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _key(spec: EpisodeSpec) -> tuple[Any, ...]:
        return spec.env_id, spec.split, json.dumps(dict(spec.env_kwargs), sort_keys=True)

    def take(self, spec: EpisodeSpec) -> gym.Env:
        """An env for ``spec`` (a free one, else a new one); give it back with :meth:`give`."""
        with self._lock:
            free = self._free.get(self._key(spec))
            if free:
                return free.pop()
        import agentenv  # noqa: F401 - registers the ids

        kwargs = dict(spec.env_kwargs)
        kwargs.setdefault("split", spec.split)
        return gym.make(spec.env_id, **kwargs)

    def give(self, spec: EpisodeSpec, env: gym.Env) -> None:
        with self._lock:
            self._free.setdefault(self._key(spec), []).append(env)

    @contextmanager
    def lend(self, spec: EpisodeSpec) -> Iterator[gym.Env]:
        env = self.take(spec)
        try:
            yield env
        finally:
            self.give(spec, env)


SHARED_POOL = EnvPool()
"""The process's pool: a trainer worker plays many rows on few envs."""


def episode_specs(
    env_id: str,
    *,
    split: str = "test",
    episodes: int | None = None,
    seed: int = 0,
    env_kwargs: Mapping[str, Any] | None = None,
) -> list[EpisodeSpec]:
    """``agentenv eval``'s episodes for these arguments (``episodes=None``: one pass over the tasks)."""
    from agentenv.evaluation.runner import RunConfig, episode_plan, make_env

    kwargs = dict(env_kwargs or {})
    env = make_env(
        RunConfig(
            env_id=env_id, agent="none", split=split, env_kwargs=tuple(sorted(kwargs.items()))
        )
    )
    tasks = env.unwrapped.tasks
    plan = episode_plan(len(tasks), len(tasks) if episodes is None else episodes, seed)
    return [
        EpisodeSpec(
            env_id, split, index, seed + i, tasks[index].id, i, tuple(sorted(kwargs.items()))
        )
        for i, index in enumerate(plan)
    ]


def first_messages(
    spec: EpisodeSpec, pool: EnvPool = SHARED_POOL
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The episode's opening messages (system, user) and tool schemas, as ``reset`` gives them."""
    with pool.lend(spec) as env:
        _, info = env.reset(**spec.reset_kwargs())
        spec.check_task(info)
        return list(info["messages"]), list(info.get("tools") or [])
