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

import hashlib
import itertools
import json
import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import gymnasium as gym
import numpy as np

from agentenv.actions import action_from_message
from agentenv.actions import tool_call as render_tool_call
from agentenv.integrations.tools_as_methods import RESERVED_NAMES, tool_method

if TYPE_CHECKING:  # pragma: no cover - typing only
    import datasets
    import transformers

    from agentenv.core import Task

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

EPISODE_OVER = "The episode is over; this call was not run. Stop here."
LIVE_TURNS_PER_TURN = 32
"""The live env runs one call per step, so its budget is the env's turn budget times the most calls
one action may hold (32, the parser's limit): the live env never ends an episode the referee would not."""


# ----------------------------------------------------------------------------- per-process caches
_LOCK = threading.Lock()
_CLASSES: dict[str, type[AgentEnvTRL]] = {}
_SPLIT_TASKS: dict[tuple[str, str], tuple[Sequence[Task], dict[str, int]]] = {}
_REFEREES: dict[str, list[gym.Env]] = {}
_DRAWN: OrderedDict[str, tuple[str, str, int]] = OrderedDict()
"""Prompt text returned by ``reset`` for a drawn task -> (split, task id, seed), so a reward function
without ``environments`` (the async trainer) can find the episode of a row that named no task."""
_DRAWN_LIMIT = 65_536


def _spec_key(env_id: str, make_kwargs: Mapping[str, Any]) -> str:
    return env_id + "|" + json.dumps(make_kwargs, sort_keys=True, default=repr)


def _derive_seed(*parts: Any) -> int:
    """A stable 32-bit seed from any parts (no Python ``hash``: it differs between processes)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "little")


def _class_name(env_id: str) -> str:
    """``MediaSearch-v0`` -> ``MediaSearch_v0``: the reward column and the class are named after the env."""
    return re.sub(r"\W", "_", env_id)


def _make(env_id: str, make_kwargs: Mapping[str, Any]) -> gym.Env:
    import agentenv  # noqa: F401 - registers the ids

    return gym.make(env_id, **make_kwargs)


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
        return _spec_key(self.env_id, self.make_kwargs)

    @property
    def name(self) -> str:
        """The env class's name, also the reward column's name."""
        return _class_name(self.env_id)

    @property
    def env_class(self) -> type[AgentEnvTRL]:
        """This process's class for ``(env_id, make_kwargs)``: built once, then the same object."""
        key = self.key
        cls = _CLASSES.get(key)
        if cls is None:
            with _LOCK:
                cls = _CLASSES.get(key)
                if cls is None:
                    cls = _CLASSES[key] = _build_class(self.env_id, self.make_kwargs)
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
    probe = _make(env_id, make_kwargs)
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
    _REFEREES.setdefault(_spec_key(env_id, make_kwargs), []).append(
        probe
    )  # the env read for the tools referees
    return type(_class_name(env_id), (AgentEnvTRL,), namespace)


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


def _split_tasks(
    factory: AgentEnvFactory, split: str, env: gym.Env | None = None
) -> tuple[Sequence[Task], dict[str, int]]:
    """The tasks of ``split`` and their id -> position index, built once per process."""
    key = (factory.key, split)
    found = _SPLIT_TASKS.get(key)
    if found is None:
        with _LOCK:
            found = _SPLIT_TASKS.get(key)
            if found is None:
                if env is not None and env.unwrapped.split == split:
                    tasks = env.unwrapped.tasks
                else:
                    other = _make(factory.env_id, {**factory.make_kwargs, "split": split})
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


def _default_split(factory: AgentEnvFactory) -> str:
    return str(factory.make_kwargs.get("split", "train"))


TaskOption = Any
"""A task as reset's ``options["task"]`` takes it: a :class:`~agentenv.core.Task`, or a task dict."""


def _pinned(
    factory: AgentEnvFactory, row: Mapping[str, Any], env: gym.Env | None = None
) -> tuple[TaskOption, str, int] | None:
    """``(task, split, seed)`` of the task a row pins (``task_id``, else ``index``, else a ``task``
    dict), looked up in the row's ``split`` (else the factory's); None when the row pins none."""
    split = row.get("split")
    split = _default_split(factory) if split is None else str(split)
    if row.get("task_id") is not None:
        tasks, ids = _split_tasks(factory, split, env)
        position = ids.get(row["task_id"])
        if position is None:
            raise KeyError(
                f"task_id {row['task_id']!r} is not in split {split!r} of {factory.env_id}"
            )
        task: TaskOption = tasks[position]
        identity = task.id
    elif row.get("index") is not None:
        tasks, _ = _split_tasks(factory, split, env)
        index = row["index"]
        if isinstance(index, bool) or not 0 <= int(index) < len(tasks):
            raise IndexError(
                f"index must be an int in [0, {len(tasks)}) for split {split!r}, got {index!r}"
            )
        task = tasks[int(index)]
        identity = task.id
    elif row.get("task") is not None:
        task = row["task"]
        identity = (
            task.id if hasattr(task, "id") else json.dumps(task, sort_keys=True, default=repr)
        )
    else:
        return None
    seed = int(row["seed"]) if row.get("seed") is not None else _derive_seed(factory.seed, identity)
    return task, split, seed


def _remember_drawn(prompt: str, key: EpisodeKey) -> None:
    with _LOCK:
        _DRAWN[prompt] = (key.split, key.task_id, key.seed)
        _DRAWN.move_to_end(prompt)
        while len(_DRAWN) > _DRAWN_LIMIT:
            _DRAWN.popitem(last=False)


def _find_drawn(prompt_messages: Any) -> tuple[str, str, int] | None:
    if not prompt_messages:
        return None
    last = prompt_messages[-1]
    content = last.get("content") if isinstance(last, Mapping) else last
    if not isinstance(content, str):
        return None
    with _LOCK:
        found = _DRAWN.get(content)
        if found is None:  # the observation was appended to a row's own text
            found = next((v for k, v in reversed(_DRAWN.items()) if content.endswith(k)), None)
    return found


# ----------------------------------------------------------------------------- one rollout's env
class AgentEnvTRL:
    """One rollout's env for TRL; :class:`AgentEnvFactory` makes subclasses with one method per env tool.

    Public attributes (read them, e.g. in callbacks): ``episode`` (the :class:`EpisodeKey` of the
    current episode), ``info`` (the live env's last ``info``), ``result`` (the :class:`EpisodeResult`
    the reward function computed for the last rollout, when TRL passed it ``environments``).
    """

    env_id: ClassVar[str] = ""

    def __init__(self, factory: AgentEnvFactory, number: int = 0) -> None:
        if factory.env_id != self.env_id:
            raise ValueError(f"{type(self).__name__} serves {self.env_id}, not {factory.env_id}")
        self._factory = factory
        self._number = int(number)
        self._episodes = 0
        self._env = _make(factory.env_id, factory.make_kwargs)
        self._budget = self._env.unwrapped.max_turns
        self._live = False
        self._task: Task | None = None
        self.episode: EpisodeKey | None = None
        self.info: dict[str, Any] = {}
        self.result: EpisodeResult | None = None

    # -------------------------------------------------------------- TRL contract
    def reset(self, **row: Any) -> str | None:
        """Start an episode on the row's task; return the prompt text only when the row pins none."""
        factory = self._factory
        pinned = _pinned(factory, row, self._env)
        if pinned is None:
            split = _default_split(factory)
            tasks, _ = _split_tasks(factory, split, self._env)
            rng = np.random.default_rng([factory.seed, self._number, self._episodes])
            task: TaskOption = tasks[int(rng.integers(len(tasks)))]
            seed = (
                int(row["seed"])
                if row.get("seed") is not None
                else _derive_seed(factory.seed, task.id)
            )
        else:
            task, split, seed = pinned
        self._episodes += 1
        inner = self._env.unwrapped
        inner.max_turns = self._budget  # the system prompt states the env's own budget
        _, self.info = self._env.reset(seed=seed, options={"task": task})
        inner.max_turns = self._budget * LIVE_TURNS_PER_TURN
        self._task = inner.task
        self.episode = EpisodeKey(
            split=self._task.split or split, task_id=self.info["task_id"], seed=seed
        )
        self.result, self._live = None, True
        if pinned is not None:
            return None
        system, user = (m["content"] for m in self.info["messages"][:2])
        text = f"{system}\n\n{user}"
        _remember_drawn(text, self.episode)
        return text

    # ------------------------------------------------------------------ helpers
    def _call_tool(self, name: str, arguments: Mapping[str, Any]) -> str:
        if not self._live:
            return EPISODE_OVER
        obs, _, terminated, truncated, self.info = self._env.step(
            render_tool_call(name, **dict(arguments))
        )
        if terminated or truncated:
            self._live = False
        return obs


# ----------------------------------------------------------------------------- the reward
def message_action(message: Mapping[str, Any]) -> str:
    """The action text of one assistant message, rendered as the ``llm`` eval agent renders a reply:
    :func:`agentenv.actions.action_from_message` in ``"native"`` mode (one function for both)."""
    return action_from_message(message, "native")


class AgentEnvReward:
    """TRL reward function: each rollout's episode return, as the env scores its assistant messages.

    Picklable (it holds the factory's settings only). For each rollout it finds the episode's
    task and seed (from ``environments`` when TRL passes them, else the row's ``task_id`` /
    ``index`` / ``split`` / ``seed`` columns, else the prompt text a drawn task was shown with),
    resets a referee env to that start and steps it once per assistant message of the completion.
    ``last_results`` holds the :class:`EpisodeResult` of the last call's rollouts.
    """

    def __init__(self, factory: AgentEnvFactory) -> None:
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
        columns = {
            k: v for k, v in kwargs.items() if isinstance(v, list) and len(v) == len(completions)
        }
        results: list[EpisodeResult | None] = []
        for i, completion in enumerate(completions):
            env = environments[i] if environments is not None else None
            row = {k: v[i] for k, v in columns.items()}
            results.append(self._score(prompts[i] if prompts else None, completion, env, row))
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
        self, prompt: Any, completion: Any, env: Any, row: Mapping[str, Any]
    ) -> EpisodeResult | None:
        factory = self.factory
        if env is not None:
            if not isinstance(env, AgentEnvTRL) or env.env_id != factory.env_id:
                return None  # another environment's rollout (a dict environment_factory)
            if env.episode is None or env._task is None:
                raise RuntimeError("the rollout's env was never reset")
            task, key = env._task, env.episode
        else:
            pinned = _pinned(factory, row)
            if pinned is not None:
                task, split, seed = pinned
                key = EpisodeKey(split=split, task_id=getattr(task, "id", ""), seed=seed)
            else:
                drawn = _find_drawn(prompt)
                if drawn is None:
                    raise ValueError(
                        f"cannot tell which {factory.env_id} task this rollout played: give the rows a task_id "
                        "(agentenv.integrations.trl.dataset does), or pass the env instances as `environments`"
                    )
                key = EpisodeKey(*drawn)
                tasks, ids = _split_tasks(factory, key.split)
                task = tasks[ids[key.task_id]]
        messages = (
            completion
            if isinstance(completion, list)
            else [{"role": "assistant", "content": str(completion)}]
        )
        result = _replay(factory, task, key, [m for m in messages if m.get("role") == "assistant"])
        if isinstance(env, AgentEnvTRL):
            env.result = result
        return result


def _replay(
    factory: AgentEnvFactory, task: TaskOption, key: EpisodeKey, turns: Sequence[Mapping[str, Any]]
) -> EpisodeResult:
    """Step a referee env once per assistant message; the last one ends the episode (answer or truncation)."""
    with _LOCK:
        pool = _REFEREES.setdefault(factory.key, [])
        env = pool.pop() if pool else None
    if env is None:
        env = _make(factory.env_id, factory.make_kwargs)
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
        with _LOCK:
            _REFEREES.setdefault(factory.key, []).append(env)


# ----------------------------------------------------------------------------- data and tokenizer
def dataset(env_id: str, split: str, n: int | None = None, **make_kwargs: Any) -> datasets.Dataset:
    """The prompt dataset for :class:`AgentEnvFactory`: one row per task of ``split``, in split order.

    Columns: ``prompt`` (the env's own system and user messages, as ``agentenv eval`` sends them),
    ``task_id``, ``index`` and ``split``. ``n`` keeps the first ``n`` tasks.
    """
    from datasets import Dataset

    env = _make(env_id, {**make_kwargs, "split": split})
    count = len(env.unwrapped.tasks) if n is None else min(int(n), len(env.unwrapped.tasks))
    rows: dict[str, list[Any]] = {"prompt": [], "task_id": [], "index": [], "split": []}
    for index in range(count):
        _, info = env.reset(options={"index": index})
        system, user = info["messages"][:2]
        rows["prompt"].append(
            [
                {"role": "system", "content": system["content"]},
                {"role": "user", "content": user["content"]},
            ]
        )
        rows["task_id"].append(info["task_id"])
        rows["index"].append(index)
        rows["split"].append(env.unwrapped.split)
    env.close()
    return Dataset.from_dict(rows)


def checkpointing_option(config_cls: type, enabled: bool) -> dict[str, bool]:
    """The activation-checkpointing switch under the name this transformers version uses.

    transformers 5.2x renamed ``gradient_checkpointing`` to ``activation_checkpointing``
    (the old name warns); TRL 1.16 works with either release.
    """
    import dataclasses

    names = {f.name for f in dataclasses.fields(config_cls)}
    key = (
        "activation_checkpointing"
        if "activation_checkpointing" in names
        else "gradient_checkpointing"
    )
    return {key: enabled}


def qwen3_tokenizer() -> transformers.PreTrainedTokenizerFast:
    """agentenv's offline Qwen3 tokenizer carrying Qwen3's own chat template as shipped inside TRL.

    TRL recognises a chat template by its exact text: for Qwen3's it sets the
    response template that parses tool calls and swaps in its
    prefix-preserving training template. agentenv's template renders the same
    text but is not byte-identical, so for TRL the tokenizer carries TRL's
    copy of Qwen3's template (read from the installed TRL, nothing fetched).
    """
    from trl.chat_template_utils import qwen3_chat_template

    from agentenv.tokens.qwen3_tokenizer import load_tokenizer

    tokenizer = load_tokenizer()
    tokenizer.chat_template = qwen3_chat_template
    return tokenizer
