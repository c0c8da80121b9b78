"""Trajectories of a served env: each trajectory id owns one env instance while it lives.

Why a pool: building a second env of an id costs about 30 ms (its tools, its
parser, its renderer), a hundred times a step. A trajectory takes a built env
from :class:`EnvPool` and gives it back when it ends; ``reset`` with the
trajectory's seed makes the reused env indistinguishable from a new one (the
env contract: same seed, options and actions, same episode).

:class:`Trajectories` is the life cycle the protocols share, with no server
in it (so tests drive it with a fake clock):

* **created on first sight** of an id, reset with the seed and task its
  start fields name (:func:`start_from_fields`);
* **stepped** with the agent's text, which never raises (the env turns bad
  text into an error observation);
* **ended** when the env terminates or truncates, when the client says
  ``finish``, when it reaches ``max_turns``, or when it has been idle
  ``trajectory_idle_s``; its env goes back to the pool at once, and its id is
  remembered (up to ``remembered_ended``), so a late step gets an error
  naming why instead of silently starting a new episode;
* **capped**: at most ``max_live_envs`` live at once; :meth:`Trajectories.room_for`
  lets a protocol refuse a whole request before stepping any of it. The cap is
  shared per client (the peer address that started a trajectory): at the cap, a
  client below its share (``max_live_envs`` over the clients holding or asking)
  takes back slots from clients above theirs, their least recently stepped
  trajectories first, so trajectories a client abandoned go before any it still
  steps, and a client that never finishes cannot keep another from starting.

Example:
    >>> import gymnasium as gym, agentenv
    >>> from agentenv.engine.actions import answer
    >>> from agentenv.integrations.serve_env.limits import EnvServerLimits
    >>> pool = EnvPool(lambda split: gym.make("MediaSearch-v0", split=split), max_idle=4)
    >>> trajectories = Trajectories(pool, EnvServerLimits(), default_split="test")
    >>> _ = trajectories.start("t1", start_from_fields({"seed": 0, "index": 0}))
    >>> outcome = trajectories.step("t1", answer("no idea"))
    >>> outcome.done, outcome.valid, outcome.reward, "t1" in trajectories.live
    (True, True, 0.0, False)
    >>> trajectories.ended["t1"]
    'it terminated (the final answer was graded)'
"""

from __future__ import annotations

import dataclasses
import gc
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from agentenv.integrations.serve_env.limits import EnvServerLimits

START_FIELDS = ("seed", "index", "task_id", "split")
"""The fields that pick a trajectory's episode (verl-tool's ``extra_fields``, OpenEnv's reset data);
a row written by ``agentenv prepare-verl`` (``task_index`` and the rest) is read as such."""


class StartError(ValueError):
    """A trajectory's start fields cannot start an episode; the message names the field and the fix."""


@dataclasses.dataclass(frozen=True)
class Start:
    """How to reset a trajectory's env: ``reset(seed=seed, options=options)`` on ``split``."""

    seed: int | None = None
    options: Mapping[str, Any] | None = None
    split: str | None = None
    expect_task_id: str | None = None
    """The task id the row was written for, checked after reset (rows for other tasks fail loudly)."""
    env_kwargs: Mapping[str, Any] | None = None
    """The env kwargs the row was written for, checked against the server's."""


def start_from_fields(fields: Mapping[str, Any], *, env_id: str | None = None) -> Start:
    """Read the start fields (``seed``, and ``index`` or ``task_id``, and ``split``; ``env_id`` and
    ``env_kwargs``, when given, must be the server's); other keys are ignored (a trainer's row
    carries columns of its own).

    Trainers pass them to ``reset`` (OpenEnv) or carry them in each row's
    ``extra_info`` (verl-tool sends it as ``extra_fields``). The same fields give
    the same episode as ``agentenv eval`` with ``reset(seed=seed, options={"index": index})``.
    A row written by ``agentenv prepare-verl`` (it has ``task_index``; its
    ``index`` is the row's number, its ``task_id`` a check) is read as
    :class:`~agentenv.integrations.row_episodes.EpisodeSpec` reads it, and must
    name ``env_id`` when given.

    Example:
        >>> start_from_fields({"seed": 3, "index": 7, "split": "test", "images": None})
        Start(seed=3, options={'index': 7}, split='test', expect_task_id=None, env_kwargs=None)
        >>> start_from_fields({"env_id": "MediaSearch-v0", "split": "test", "task_index": 2, "task_id": "t",
        ...                    "seed": 9, "episode": 0, "env_kwargs": "{}", "index": 0}).options
        {'index': 2}
        >>> start_from_fields({"seed": "3"})
        Traceback (most recent call last):
        ...
        agentenv.integrations.serve_env.sessions.StartError: 'seed' must be a non-negative integer, got str
    """
    if "task_index" in fields:
        return _start_from_row(fields, env_id)
    row_env = fields.get("env_id")
    if row_env is not None:  # a field the rows name: checked, never ignored
        if not isinstance(row_env, str):
            raise StartError(f"'env_id' must be an env id string, got {_kind(row_env)}")
        if env_id and row_env.removeprefix("agentenv:") != env_id:
            raise StartError(f"the fields are for {row_env[:80]!r}; this server serves {env_id!r}")
    env_kwargs = None
    if fields.get("env_kwargs") is not None:
        from agentenv.integrations.row_episodes import row_env_kwargs

        try:
            env_kwargs = row_env_kwargs(fields["env_kwargs"])
        except (ValueError, TypeError) as err:
            raise StartError(" ".join(str(err).split())[:300]) from None
    seed = fields.get("seed")
    if seed is not None and not _natural(seed):
        raise StartError(f"'seed' must be a non-negative integer, got {_kind(seed)}")
    index, task_id = fields.get("index"), fields.get("task_id")
    if index is not None and task_id is not None:
        raise StartError("give 'index' or 'task_id', not both")
    options: dict[str, Any] | None = None
    if index is not None:
        if not _natural(index):
            raise StartError(f"'index' must be a non-negative integer, got {_kind(index)}")
        options = {"index": index}
    elif task_id is not None:
        if not isinstance(task_id, str) or not 0 < len(task_id) <= 200:
            raise StartError(
                f"'task_id' must be a task id string (1-200 characters), got {_kind(task_id)}"
            )
        options = {"task_id": task_id}
    split = fields.get("split")
    if split is not None and (not isinstance(split, str) or not split.isidentifier()):
        raise StartError(
            f"'split' must be a split name such as 'train' or 'test', got {_kind(split)}"
        )
    return Start(seed=seed, options=options, split=split, env_kwargs=env_kwargs)


def _start_from_row(fields: Mapping[str, Any], env_id: str | None) -> Start:
    """A ``prepare-verl`` row's episode (see :class:`~agentenv.integrations.row_episodes.EpisodeSpec`)."""
    from agentenv.integrations.row_episodes import EpisodeSpec

    try:
        spec = EpisodeSpec.from_fields(fields, env_id=None if "env_id" in fields else env_id or "")
    except (
        ValueError,
        TypeError,
    ) as err:  # UserInputError is a ValueError; so is bad env_kwargs JSON
        raise StartError(" ".join(str(err).split())[:300]) from None
    if env_id and spec.env_id != env_id:
        raise StartError(f"the row is for {spec.env_id[:80]!r}; this server serves {env_id!r}")
    return Start(
        seed=spec.seed,
        options={"index": spec.task_index},
        split=spec.split,
        expect_task_id=spec.task_id or None,
        env_kwargs=dict(spec.env_kwargs),
    )


def _natural(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63


def _kind(value: object) -> str:
    text = repr(value)
    return (
        type(value).__name__
        if len(text) > 40 or isinstance(value, str)
        else f"{type(value).__name__} {text}"
    )


def check_env_kwargs(start: Start, served: Mapping[str, Any] | None) -> None:
    """Refuse a row written for other env kwargs than the server's (``served`` None: not checked)."""
    if start.env_kwargs is not None and served is not None and start.env_kwargs != served:
        raise StartError(
            f"the row was written for env kwargs {json.dumps(start.env_kwargs)[:200]}; this server "
            f"serves {json.dumps(dict(served))[:200]} (start it with the row's --env-arg values)"
        )


def reset(env: Any, start: Start) -> tuple[str, Mapping[str, Any]]:
    """``env.reset`` as ``start`` says; a task the env refuses, or not the row's, is a StartError."""
    try:
        obs, info = env.reset(
            seed=start.seed, options=dict(start.options) if start.options else None
        )
    except (ValueError, KeyError, IndexError, TypeError) as err:
        raise StartError(
            f"cannot start an episode from {dict(start.options or {})}: "
            f"{' '.join(str(err).split())[:200]}"
        ) from None
    if start.expect_task_id and info.get("task_id") != start.expect_task_id:
        raise StartError(
            f"task {dict(start.options or {}).get('index')} of split {start.split!r} is "
            f"{info.get('task_id')!r}, the row says {start.expect_task_id[:80]!r}: rewrite the rows "
            "for these tasks"
        )
    return obs, info


class EnvPool:
    """Built envs, per split, waiting to be reused; ``make(split)`` builds one when none waits.

    Thread-safe (OpenEnv's server creates and closes sessions on worker threads).
    """

    def __init__(self, make: Callable[[str], Any], max_idle: int) -> None:
        self._make = make
        self._free: dict[str, list[Any]] = {}
        self._refused: dict[str, str] = {}
        self._lock = threading.Lock()
        self._idle = 0
        """Envs waiting in ``_free``, all splits together."""
        self.max_idle = max_idle
        self.built = 0

    def take(self, split: str) -> Any:
        """A built env of ``split``; raises StartError if the env refuses that split."""
        with self._lock:
            free = self._free.get(split)
            if free:
                self._idle -= 1
                return free.pop()
        if split in self._refused:
            raise StartError(self._refused[split])
        try:
            env = self._make(split)
        except (ValueError, KeyError, TypeError) as err:
            reason = (
                f"'split' {split!r} is not a split of this env ({' '.join(str(err).split())[:200]})"
            )
            if len(self._refused) < 64:
                self._refused[split] = reason
            raise StartError(reason) from None
        self.built += 1
        # Out of the collector's sight, as the envs built at start are: full collections over
        # hundreds of unfrozen envs paused every trajectory 50-100 ms (verl-tool, OpenEnv, workers).
        gc.freeze()
        return env

    def give(self, split: str, env: Any) -> None:
        """Take ``env`` back for reuse (it is reset before its next episode), or close it if enough wait."""
        with self._lock:
            if self._idle < self.max_idle:
                self._free.setdefault(split, []).append(env)
                self._idle += 1
                return
        env.close()

    def close(self) -> None:
        """Close every waiting env."""
        with self._lock:
            waiting = [env for envs in self._free.values() for env in envs]
            self._free.clear()
            self._idle = 0
        for env in waiting:
            env.close()


@dataclasses.dataclass(slots=True)
class Trajectory:
    """One live trajectory: its env, split and counters."""

    env: Any
    split: str
    last_active: float
    turns: int = 0
    total_reward: float = 0.0
    client: str = "?"
    """Who started it (the peer address): the cap is shared per client."""


@dataclasses.dataclass(slots=True)
class Outcome:
    """One step of a trajectory as the protocols report it (slotted, not frozen: built on every step)."""

    observation: str
    reward: float
    terminated: bool
    truncated: bool
    valid: bool
    """False when the env could not parse the action (``info["parse_error"]``)."""
    info: Mapping[str, Any]
    turns: int
    total_reward: float

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated


@dataclasses.dataclass
class TrajectoryStats:
    """Counters shown by the servers' ``/info``."""

    started: int = 0
    steps: int = 0
    finished: int = 0
    evicted: int = 0
    taken_back: int = 0
    """Trajectories ended at the cap because their client held more than its share."""
    refused: int = 0
    """Requests or sessions turned away at ``max_live_envs``."""
    invalid_requests: int = 0
    step_errors: int = 0
    """Steps whose env raised (a bug, never agent text): answered as an error, the trajectory ended."""


class Trajectories:
    """Live trajectories by id, oldest-active first, with the ended ids remembered."""

    def __init__(
        self,
        pool: EnvPool,
        limits: EnvServerLimits,
        *,
        default_split: str,
        clock: Callable[[], float] = time.monotonic,
        env_id: str | None = None,
        env_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        self.pool = pool
        self.limits = limits
        self.default_split = default_split
        self.env_id = env_id
        """The served id, which rows must name (None: not checked)."""
        self.env_kwargs = dict(env_kwargs) if env_kwargs is not None else None
        """The served env kwargs, which rows must match (None: not checked)."""
        self.clock = clock
        self.live: OrderedDict[str, Trajectory] = OrderedDict()
        self.ended: OrderedDict[str, str] = OrderedDict()
        self.reserved = 0
        """Slots promised to trajectories about to start (a request starting several yields between them)."""
        self.per_client: dict[str, int] = {}
        """Live trajectories per client."""
        self.stats = TrajectoryStats()

    def sweep(self) -> int:
        """End the trajectories idle for ``trajectory_idle_s``; return how many."""
        deadline = self.clock() - self.limits.trajectory_idle_s
        evicted = 0
        while self.live:
            tid, trajectory = next(iter(self.live.items()))
            if trajectory.last_active > deadline:
                break
            self.end(
                tid,
                f"it was idle for more than {self.limits.trajectory_idle_s:g} s and its env was closed",
            )
            self.stats.evicted += 1
            evicted += 1
        return evicted

    def room_for(self, new: int, client: str = "?") -> bool:
        """Whether ``new`` more trajectories of ``client`` fit under ``max_live_envs`` (after
        evicting idle ones, then taking back slots held past their share: :meth:`take_back`).

        Counts the reserved slots; a caller that will start them later reserves them at once
        (``reserved += new``) and gives each back as it starts it.
        """
        if len(self.live) + self.reserved + new <= self.limits.max_live_envs:
            return True
        self.sweep()
        if len(self.live) + self.reserved + new <= self.limits.max_live_envs:
            return True
        return self.take_back(new, client)

    def share(self, client: str) -> int:
        """``client``'s share of ``max_live_envs``: the cap over the clients holding trajectories and it."""
        clients = len(self.per_client) + (client not in self.per_client)
        return max(self.limits.max_live_envs // clients, 1)

    def take_back(self, new: int, client: str) -> bool:
        """At the cap: end enough trajectories of clients above their share for ``client``'s ``new``
        ones, least recently stepped first; False (nothing ended) when ``client`` would pass its own
        share or the others do not hold enough above theirs."""
        needed = len(self.live) + self.reserved + new - self.limits.max_live_envs
        share = self.share(client)
        if self.per_client.get(client, 0) + new > share:
            return False
        above = {c: n - share for c, n in self.per_client.items() if n > share and c != client}
        if sum(above.values()) < needed:
            return False
        now, victims = self.clock(), []
        for tid, trajectory in self.live.items():  # least recently stepped first
            if len(victims) == needed:
                break
            if above.get(trajectory.client, 0) > 0:
                above[trajectory.client] -= 1
                victims.append((tid, now - trajectory.last_active))
        for tid, idle in victims:
            self.end(
                tid,
                f"the server was at its cap of {self.limits.max_live_envs} live trajectories and its "
                f"client held more than its share ({share}); it was the least recently stepped "
                f"(idle {idle:.0f} s). Finish trajectories you no longer step",
            )
            self.stats.taken_back += 1
        return True

    def start(self, tid: str, start: Start, client: str = "?") -> tuple[str, Mapping[str, Any]]:
        """Start trajectory ``tid``: an env from the pool, reset as ``start`` says; return (obs, info).

        Raises:
            StartError: the split, seed or task cannot start an episode (the env stays in the pool).
        """
        check_env_kwargs(start, self.env_kwargs)
        split = start.split or self.default_split
        env = self.pool.take(split)
        try:
            obs, info = reset(env, start)
        except StartError:
            self.pool.give(split, env)
            raise
        self.live[tid] = Trajectory(env, split, self.clock(), client=client)
        self.per_client[client] = self.per_client.get(client, 0) + 1
        self.ended.pop(tid, None)
        self.stats.started += 1
        return obs, info

    def step(self, tid: str, action: str, *, last_step: bool = False) -> Outcome:
        """Step live trajectory ``tid`` with ``action``; end it when the episode is over.

        ``last_step`` (the client's last turn) and ``max_turns`` end it as truncated
        after this step. An env that raises (a bug: agent text never makes it raise)
        ends the trajectory with an error observation instead of taking the server down.
        """
        trajectory = self.live[tid]
        trajectory.last_active = self.clock()
        self.live.move_to_end(tid)
        trajectory.turns += 1
        self.stats.steps += 1
        try:
            obs, reward, terminated, truncated, info = trajectory.env.step(action)
        except Exception as err:  # noqa: BLE001 - one env's bug must not stop the others' steps
            self.stats.step_errors += 1
            self.end(tid, f"its env failed ({type(err).__name__})", reuse=False)
            return Outcome(
                f"Error: the env failed on this step ({type(err).__name__}: "
                f"{' '.join(str(err).split())[:200]}); the trajectory has ended.",
                0.0,
                False,
                True,
                False,
                {},
                trajectory.turns,
                trajectory.total_reward,
            )
        trajectory.total_reward += float(reward)
        if not (terminated or truncated) and (
            last_step or trajectory.turns >= self.limits.max_turns
        ):
            truncated = True
        outcome = Outcome(
            obs,
            float(reward),
            bool(terminated),
            bool(truncated),
            "parse_error" not in info,
            info,
            trajectory.turns,
            trajectory.total_reward,
        )
        if terminated:
            self.end(tid, "it terminated (the final answer was graded)")
        elif truncated:
            self.end(tid, "it was truncated (its turn budget ran out)")
        return outcome

    def finish(self, tid: str) -> bool:
        """End ``tid`` because the client says so; False if it was not live."""
        if tid not in self.live:
            return False
        self.end(tid, "the client finished it")
        self.stats.finished += 1
        return True

    def end(self, tid: str, why: str, *, reuse: bool = True) -> None:
        """Give ``tid``'s env back to the pool (``reuse=False``: close it) and remember why it ended."""
        trajectory = self.live.pop(tid, None)
        if trajectory is not None:
            held = self.per_client[trajectory.client] - 1
            if held:
                self.per_client[trajectory.client] = held
            else:
                del self.per_client[trajectory.client]
            if reuse:
                self.pool.give(trajectory.split, trajectory.env)
            else:
                trajectory.env.close()
        self.ended[tid] = why
        self.ended.move_to_end(tid)
        while len(self.ended) > self.limits.remembered_ended:
            self.ended.popitem(last=False)

    def close(self) -> None:
        """End every live trajectory and close every env."""
        for tid in list(self.live):
            self.end(tid, "the server stopped")
        self.pool.close()


def env_factory(env_id: str, env_kwargs: Mapping[str, Any]) -> Callable[[str], Any]:
    """``make(split)`` for a registered id: ``gym.make(env_id, split=split, **env_kwargs)``."""
    import gymnasium as gym

    import agentenv  # noqa: F401 - registers the ids

    def make(split: str) -> Any:
        return gym.make(env_id, **{**env_kwargs, "split": split})

    return make
