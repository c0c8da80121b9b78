"""Per-process state and episode/task lookup of the TRL adapter (:mod:`agentenv.integrations.trl`).

Why apart: the factory, the rollout env and the reward function all find an episode's
task and seed the same way and share one set of per-process caches; this module is
that one way (no TRL, torch or ``datasets`` import).
"""

from __future__ import annotations

import hashlib
import json
import operator
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import gymnasium as gym

if TYPE_CHECKING:  # pragma: no cover - typing only
    from agentenv.core import Task

__all__ = ["EpisodeKey", "EpisodeResult", "TaskOption", "task_positions"]


class FactorySpec(Protocol):
    """What the episode helpers, the rollout env and the reward read of an
    :class:`~agentenv.integrations.trl.AgentEnvFactory`.

    A protocol rather than the class, so that these modules do not import the package
    ``__init__`` that defines the factory and imports them.
    """

    @property
    def env_id(self) -> str: ...
    @property
    def seed(self) -> int: ...
    @property
    def make_kwargs(self) -> dict[str, Any]: ...
    @property
    def key(self) -> str: ...
    @property
    def name(self) -> str: ...


# ----------------------------------------------------------------------------- per-process caches
EPISODES_LOCK = threading.Lock()
_SPLIT_TASKS: dict[tuple[str, str], tuple[Sequence[Task], dict[str, int]]] = {}
REFEREES: dict[str, list[gym.Env]] = {}
_DRAWN: OrderedDict[str, tuple[str, str, int]] = OrderedDict()
"""Prompt text returned by ``reset`` for a drawn task -> (split, task id, seed), so a reward function
without ``environments`` (the async trainer) can find the episode of a row that named no task."""
_DRAWN_LIMIT = 65_536


def spec_key(env_id: str, make_kwargs: Mapping[str, Any]) -> str:
    return env_id + "|" + json.dumps(make_kwargs, sort_keys=True, default=repr)


def derive_seed(*parts: Any) -> int:
    """A stable 32-bit seed from any parts (no Python ``hash``: it differs between processes)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "little")


def env_class_name(env_id: str) -> str:
    """``MediaSearch-v0`` -> ``MediaSearch_v0``: the reward column and the class are named after the env."""
    return re.sub(r"\W", "_", env_id)


def make_episode_env(env_id: str, make_kwargs: Mapping[str, Any]) -> gym.Env:
    import agentenv  # noqa: F401 - registers the ids

    return gym.make(env_id, **make_kwargs)


# ----------------------------------------------------------------------------- episodes and tasks
@dataclass(frozen=True)
class EpisodeKey:
    """What fixes an episode's start: its split, its task and the seed it is reset with."""

    split: str
    task_id: str
    seed: int


@dataclass(frozen=True)
class EpisodeResult:
    """One rollout as the env scored it: ``reward`` is the episode return (the sum of ``step_rewards``)."""

    reward: float
    step_rewards: tuple[float, ...]
    components: Mapping[str, float]
    terminated: bool
    truncated: bool
    task_id: str
    split: str
    info: Mapping[str, Any] = field(repr=False)


def split_tasks(
    factory: FactorySpec, split: str, env: gym.Env | None = None
) -> tuple[Sequence[Task], dict[str, int]]:
    """The tasks of ``split`` and their id -> position index, built once per process."""
    key = (factory.key, split)
    found = _SPLIT_TASKS.get(key)
    if found is None:
        with EPISODES_LOCK:
            found = _SPLIT_TASKS.get(key)
            if found is None:
                if env is not None and env.unwrapped.split == split:
                    tasks = env.unwrapped.tasks
                else:
                    other = make_episode_env(
                        factory.env_id, {**factory.make_kwargs, "split": split}
                    )
                    tasks = other.unwrapped.tasks
                    other.close()
                found = _SPLIT_TASKS[key] = (tasks, task_positions(tasks, split, factory.env_id))
    return found


def task_positions(tasks: Sequence[Task], split: str, env_id: str) -> dict[str, int]:
    """Each task id's position in ``tasks``; an id that two tasks share is refused.

    Why refuse: a row's ``task_id`` must name the task its rollout played. A dict built
    over shared ids keeps the last task, and the reward then grades the completion against
    another task's gold. Every split's ids are unique (the families ensure it), so this
    raises only for a family or task list that breaks that contract.

    Raises:
        ValueError: naming the id, both positions, the split and the env.
    """
    positions: dict[str, int] = {}
    for i, task in enumerate(tasks):
        first = positions.setdefault(task.id, i)
        if first != i:
            raise ValueError(
                f"task_id {task.id!r} names tasks {first} and {i} of split {split!r} of {env_id}: a row's "
                "task_id would not tell which one it played; task ids must be unique within a split"
            )
    return positions


def default_split(factory: FactorySpec) -> str:
    return str(factory.make_kwargs.get("split", "train"))


TaskOption = Any
"""A task as reset's ``options["task"]`` takes it: a :class:`~agentenv.core.Task`, or a task dict."""


def pinned_task(
    factory: FactorySpec, row: Mapping[str, Any], env: gym.Env | None = None
) -> tuple[TaskOption, str, int] | None:
    """``(task, split, seed)`` of the task a row pins (``task_id``, else ``index``, else a ``task``
    dict), looked up in the row's ``split`` (else the factory's); None when the row pins none."""
    split = row.get("split")
    split = default_split(factory) if split is None else str(split)
    if row.get("task_id") is not None:
        tasks, ids = split_tasks(factory, split, env)
        position = ids.get(row["task_id"])
        if position is None:
            raise KeyError(
                f"task_id {row['task_id']!r} is not in split {split!r} of {factory.env_id}"
            )
        task: TaskOption = tasks[position]
        identity = task.id
    elif row.get("index") is not None:
        tasks, _ = split_tasks(factory, split, env)
        index = whole_number(row["index"], "index")
        if not 0 <= index < len(tasks):
            raise IndexError(
                f"index must be an int in [0, {len(tasks)}) for split {split!r}, got {index!r}"
            )
        task = tasks[index]
        identity = task.id
    elif row.get("task") is not None:
        task = row["task"]
        identity = (
            task.id if hasattr(task, "id") else json.dumps(task, sort_keys=True, default=repr)
        )
    else:
        return None
    seed = (
        whole_number(row["seed"], "seed")
        if row.get("seed") is not None
        else derive_seed(factory.seed, identity)
    )
    if seed < 0:
        raise ValueError(f"seed must be a whole number from 0, got {seed}")
    return task, split, seed


def whole_number(value: Any, column: str) -> int:
    """A row column that holds a whole number (a Python or numpy integer); ``0.9`` played task 0,
    ``"0"`` task 0 and ``1.5`` seed 1 before."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(f"the row's {column!r} must be a whole number, got {value!r}")
    return operator.index(value)


def remember_drawn(prompt: str, key: EpisodeKey) -> None:
    with EPISODES_LOCK:
        _DRAWN[prompt] = (key.split, key.task_id, key.seed)
        _DRAWN.move_to_end(prompt)
        while len(_DRAWN) > _DRAWN_LIMIT:
            _DRAWN.popitem(last=False)


def find_drawn(prompt_messages: Any) -> tuple[str, str, int] | None:
    if not prompt_messages:
        return None
    last = prompt_messages[-1]
    content = last.get("content") if isinstance(last, Mapping) else last
    if not isinstance(content, str):
        return None
    with EPISODES_LOCK:
        found = _DRAWN.get(content)
        if found is None:  # the observation was appended to a row's own text
            found = next((v for k, v in reversed(_DRAWN.items()) if content.endswith(k)), None)
    return found
