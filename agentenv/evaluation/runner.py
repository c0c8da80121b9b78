"""Run an agent on an env for N episodes; the same results for any number of workers.

Episode ``i`` is fully determined by ``(seed, i)``: its task index comes from
one seeded permutation of the split, the env is reset with ``seed + i``, and
the agent gets its own generator seeded from the same pair. Workers only
change where an episode runs, never what it does.

:func:`run` also times the run in two parts: ``build_s`` (env construction
and a first reset, in every worker) and ``loop_s`` (the episode loop alone),
so throughput is not diluted by a one-off corpus or index build.
"""

from __future__ import annotations

import hashlib
import multiprocessing as mp
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from tqdm import tqdm

from agentenv.evaluation.agents import AgentFailure, make_agent

FAILED_ACTION = "[no action: the agent failed]"
"""What the env receives after an :class:`AgentFailure`, until the episode ends unanswered."""


@dataclass(frozen=True)
class RunConfig:
    """Everything that defines a run (and goes into ``summary.json``)."""

    env_id: str
    agent: str
    split: str = "test"
    episodes: int | None = 100
    """``None``: one pass over the served tasks (the default of ``agentenv eval --tasks``)."""
    seed: int = 0
    workers: int = 1
    agent_args: tuple[tuple[str, str], ...] = ()
    env_kwargs: tuple[tuple[str, Any], ...] = ()


def episode_plan(n_tasks: int, episodes: int, seed: int) -> list[int]:
    """Task indices for episodes 0..N-1: a seeded permutation, repeated if N > tasks."""
    rng = np.random.default_rng(seed)
    plan: list[int] = []
    while len(plan) < episodes:
        plan.extend(rng.permutation(n_tasks).tolist())
    return plan[:episodes]


def make_env(config: RunConfig) -> gym.Env:
    """The env of a run, with the split and user kwargs applied."""
    import agentenv  # noqa: F401 - registers the ids

    kwargs = dict(config.env_kwargs)
    kwargs.setdefault("split", config.split)
    return gym.make(config.env_id, **kwargs)


def tasks_file_record(path: str | Path) -> dict[str, Any]:
    """Where a ``--tasks`` source came from: its path and sha256 (of a directory: of its files, in name order)."""
    path = Path(path)
    digest = hashlib.sha256()
    files = sorted(f for f in path.rglob("*") if f.is_file()) if path.is_dir() else [path]
    for file in files:
        if path.is_dir():
            digest.update(file.relative_to(path).as_posix().encode() + b"\0")
        digest.update(file.read_bytes())
    return {"path": str(path), "sha256": digest.hexdigest()}


def run_episode(env: gym.Env, agent: Any, config: RunConfig, episode: int, task_index: int) -> dict[str, Any]:
    """One episode; returns its record for ``episodes.jsonl``, whose ``reward`` is the episode's
    return (the sum of its step rewards: with ``shaping``, the last step alone is not the return)."""
    obs, info = env.reset(seed=config.seed + episode, options={"index": task_index})
    task = env.unwrapped.task
    agent.reset(obs, info, task=task, rng=np.random.default_rng([config.seed, episode]))
    episode_return, terminated, truncated = 0.0, False, False
    failure: str | None = None
    while not (terminated or truncated):
        # An agent that cannot act (e.g. its model endpoint is down) raises AgentFailure: the env then
        # gets FAILED_ACTION until the episode ends, so the env's own grader scores it unanswered.
        action = FAILED_ACTION
        if failure is None:
            try:
                action = agent.act(obs, info)
            except AgentFailure as exc:
                failure = exc.reason
        obs, reward, terminated, truncated, info = env.step(action)
        episode_return += reward  # under shaping, costs are paid on earlier steps: the return is the sum
    components = info["reward_components"]
    record = {
        "episode": episode,
        "task_id": info["task_id"],
        "task_index": task_index,
        "kind": task.kind,
        "difficulty": task.difficulty,
        "reward": round(episode_return, 10),
        "terminated": terminated,
        "truncated": truncated,
        "reward_components": components,
        "turns": info["turn"],
        "tool_calls": info["tool_calls"],
        "gold": info.get("gold"),
        "messages": info["messages"],
    }
    if "answer_feedback" in info:
        record["answer_feedback"] = info["answer_feedback"]
    if failure is not None:
        record["agent_failure"] = failure
    return record


_WORKER: dict[str, Any] = {}


def _worker_init(config: RunConfig, ready: Any = None) -> None:
    _WORKER["config"] = config
    _WORKER["env"] = make_env(config)
    _WORKER["env"].reset(seed=config.seed)
    _WORKER["agent"] = make_agent(config.agent, **dict(config.agent_args))
    if ready is not None:
        ready.wait()  # every worker has built its env before any episode is timed


def _worker_ready(_: int) -> None:
    return None


def _worker_run(job: tuple[int, int]) -> dict[str, Any]:
    return run_episode(_WORKER["env"], _WORKER["agent"], _WORKER["config"], *job)


def iter_episodes(config: RunConfig, *, progress: bool = True) -> Iterator[dict[str, Any]]:
    """Yield episode records in episode order."""
    env = make_env(config)
    if config.episodes is None:
        config = replace(config, episodes=len(env.unwrapped.tasks))
    plan = episode_plan(len(env.unwrapped.tasks), config.episodes, config.seed)
    bar = tqdm(total=config.episodes, desc=f"{config.agent} on {config.env_id}", disable=not progress)
    if config.workers <= 1:
        agent = make_agent(config.agent, **dict(config.agent_args))
        for episode, task_index in enumerate(plan):
            yield run_episode(env, agent, config, episode, task_index)
            bar.update()
    else:
        env.close()
        ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        with ctx.Pool(config.workers, initializer=_worker_init, initargs=(config,)) as pool:
            for record in pool.imap(_worker_run, list(enumerate(plan)), chunksize=8):
                yield record
                bar.update()
    bar.close()


def env_metadata(config: RunConfig, env: gym.Env | None = None) -> Mapping[str, Any]:
    """Corpus checksums, reward preset, served split and task count of the run's env."""
    inner = (env if env is not None else make_env(config)).unwrapped
    return {
        "corpus_checksums": dict(getattr(inner, "corpus_checksums", {})),
        "reward_preset": inner.reward_config.name,
        "split": str(getattr(inner, "split", config.split)),
        "n_tasks": len(inner.tasks),
        "import_warnings": [str(w) for w in getattr(inner, "import_warnings", ())],
    }


@dataclass
class RunResult:
    """The records of a run, its timings and what its env served (for ``summary.json``)."""

    config: RunConfig
    records: list[dict[str, Any]]
    build_s: float
    loop_s: float
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def wall_s(self) -> float:
        return self.build_s + self.loop_s


def run(config: RunConfig, *, progress: bool = True) -> RunResult:
    """Build, then run the episodes; ``config.episodes=None`` means one pass over the tasks.

    ``build_s`` is env construction plus a first reset (in the workers too, with
    ``workers > 1``); ``loop_s`` is the episode loop alone. The episodes are
    exactly those of :func:`iter_episodes` for the resolved config.
    """
    start = time.perf_counter()
    env = make_env(config)
    env.reset(seed=config.seed)
    meta = dict(env_metadata(config, env))
    if config.episodes is None:
        config = replace(config, episodes=meta["n_tasks"])
    plan = episode_plan(meta["n_tasks"], config.episodes, config.seed)
    records: list[dict[str, Any]] = []
    bar = tqdm(total=config.episodes, desc=f"{config.agent} on {config.env_id}", disable=not progress)
    if config.workers <= 1:
        agent = make_agent(config.agent, **dict(config.agent_args))
        build_s = time.perf_counter() - start
        for episode, task_index in enumerate(plan):
            records.append(run_episode(env, agent, config, episode, task_index))
            bar.update()
    else:
        env.close()
        ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        ready = ctx.Barrier(config.workers)
        with ctx.Pool(config.workers, initializer=_worker_init, initargs=(config, ready)) as pool:
            pool.map(_worker_ready, range(config.workers), chunksize=1)
            build_s = time.perf_counter() - start
            for record in pool.imap(_worker_run, list(enumerate(plan)), chunksize=8):
                records.append(record)
                bar.update()
    bar.close()
    loop_s = time.perf_counter() - start - build_s
    return RunResult(config, records, build_s, loop_s, meta)


def timed_run(config: RunConfig, *, progress: bool = True) -> tuple[list[dict[str, Any]], float]:
    """All records and the wall time of the run."""
    start = time.perf_counter()
    records = list(iter_episodes(config, progress=progress))
    return records, time.perf_counter() - start
