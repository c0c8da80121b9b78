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

import contextlib
import functools
import hashlib
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from tqdm import tqdm

from agentenv.errors import UserInputError
from agentenv.evaluation.agents import AgentFailure, make_agent
from agentenv.evaluation.recorded_args import without_credentials
from agentenv.storage.paths import CacheNotWritableError

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
    concurrency: int = 1
    """Episodes in flight on threads (:mod:`agentenv.evaluation.threads`), for agents that wait: of this
    process, or with ``workers > 1`` of each worker process. Like ``workers``, it changes only speed."""
    agent_args: tuple[tuple[str, str], ...] = ()
    env_kwargs: tuple[tuple[str, Any], ...] = ()


def episode_plan(n_tasks: int, episodes: int, seed: int) -> list[int]:
    """Task indices for episodes 0..N-1: a seeded permutation, repeated if N > tasks."""
    rng = np.random.default_rng(seed)
    plan: list[int] = []
    while len(plan) < episodes:
        plan.extend(rng.permutation(n_tasks).tolist())
    return plan[:episodes]


def is_dialogue_id(env_id: str) -> bool:
    """Whether ``env_id`` is a multi-agent dialogue (``DiagnosisDialogue-v0``) rather than a Gymnasium id."""
    import agentenv  # noqa: F401 - registers the families
    from agentenv.families import bare_id, dialogue_specs

    return bare_id(env_id) in {s.id for s in dialogue_specs()}


def make_env(config: RunConfig) -> gym.Env:
    """The env of a run, with the split and user kwargs applied.

    A dialogue id is evaluated from its lead's side (the doctor, the assistant): the agent plays the lead
    and the env's own scripted simulator plays the other side
    (:func:`agentenv.multiagent.as_single_agent`), so the agent is graded by the dialogue's grader.
    """
    import agentenv  # noqa: F401 - registers the ids

    kwargs = dict(config.env_kwargs)
    kwargs.setdefault("split", config.split)
    if is_dialogue_id(config.env_id):
        from agentenv.multiagent import as_single_agent
        from agentenv.multiagent import make as make_dialogue

        return as_single_agent(make_dialogue(config.env_id, **kwargs))
    return gym.make(config.env_id, **kwargs)


def build_env(config: RunConfig) -> gym.Env:
    """:func:`make_env` for a run about to start: an env that refuses its keyword arguments (a bad
    ``--env-arg`` value or ``--reward``) is a :class:`~agentenv.errors.UserInputError` naming them."""
    try:
        return make_env(config)
    except (UserInputError, CacheNotWritableError):
        raise
    except (ValueError, TypeError, KeyError) as err:
        given = (
            ", ".join(f"{k}={v!r}" for k, v in config.env_kwargs if k != "tasks")
            or "no keyword arguments"
        )
        message = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        # gymnasium appends its own clause to a TypeError; the kwargs are already named above
        message = message.split(" was raised from the environment creator for ")[0]
        raise UserInputError(f"{config.env_id} ({given}): {message}") from err


def build_agent(config: RunConfig) -> Any:
    """The run's agent; ``--agent-args`` the agent refuses (an unknown key, a value of the wrong type, a
    missing ``model=``) are a :class:`~agentenv.errors.UserInputError` naming the agent."""
    try:
        return make_agent(config.agent, **dict(config.agent_args))
    except UserInputError:
        raise
    except (ValueError, TypeError) as err:
        given = " ".join(f"{k}={v}" for k, v in config.agent_args) or "none"
        message = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UserInputError(f"--agent {config.agent} (--agent-args {given}): {message}") from err


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


def run_episode(
    env: gym.Env, agent: Any, config: RunConfig, episode: int, task_index: int
) -> dict[str, Any]:
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
                # a reason quotes the endpoint's URL: a password written into it stays out of
                # the episode records, the summary and the board's refusals
                failure = without_credentials(exc.reason)
        obs, reward, terminated, truncated, info = env.step(action)
        episode_return += (
            reward  # under shaping, costs are paid on earlier steps: the return is the sum
        )
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
    if task.row_id:
        record["row_id"] = task.row_id
    if "answer_feedback" in info:
        record["answer_feedback"] = info["answer_feedback"]
    if failure is not None:
        record["agent_failure"] = failure
    return record


def _build_pair(config: RunConfig) -> tuple[gym.Env, Any]:
    """A fresh ``(env, agent)`` of the run (for another thread or worker process)."""
    env = make_env(config)
    env.reset(seed=config.seed)
    return env, make_agent(config.agent, **dict(config.agent_args))


def _thread_slots(
    config: RunConfig, jobs: int, env: gym.Env, agent: Any
) -> list[tuple[gym.Env, Any]]:
    """One ``(env, agent)`` pair per thread of a ``concurrency`` run (no more than there are episodes); the
    first is the run's own. Each further env costs about 13 ms and a few MB: the index is the process's."""
    return [(env, agent), *(_build_pair(config) for _ in range(min(config.concurrency, jobs) - 1))]


def _episode(
    config: RunConfig, env: gym.Env, agent: Any, index: int, task_index: int
) -> dict[str, Any]:
    return run_episode(env, agent, config, index, task_index)


def _episode_fn(config: RunConfig) -> Callable[[gym.Env, Any, int, int], dict[str, Any]]:
    """:func:`run_episode` bound to the run's config (a picklable partial, for spawned workers too)."""
    return functools.partial(_episode, config)


def _skipped_task_rows(config: RunConfig) -> int:
    """Bad rows of the run's task file skipped while reading it (``--skip-bad-rows``; 0 without a file)."""
    from agentenv.engine.task_files import skipped_rows

    tasks = dict(config.env_kwargs).get("tasks")
    return skipped_rows(tasks) if isinstance(tasks, (str, os.PathLike)) else 0


def env_metadata(
    config: RunConfig, env: gym.Env | None = None, info: Mapping[str, Any] | None = None
) -> Mapping[str, Any]:
    """Corpus checksums, reward preset, served split, task count and fingerprint of the run's env.

    ``info`` is that of a reset of ``env`` (the fingerprint reads its system prompt and tools); without
    it, ``env`` is reset with the run's seed here.
    """
    from agentenv.evaluation.fingerprint import env_fingerprint, served_env

    env = env if env is not None else make_env(config)
    if info is None:
        _, info = env.reset(seed=config.seed)
    inner = served_env(env)
    return {
        "corpus_checksums": dict(getattr(inner, "corpus_checksums", {})),
        "reward_preset": inner.reward_config.name,
        "split": str(getattr(inner, "split", config.split)),
        "n_tasks": len(inner.tasks),
        "import_warnings": [str(w) for w in getattr(inner, "import_warnings", ())],
        "skipped_task_rows": _skipped_task_rows(config),
        "fingerprint": env_fingerprint(config.env_id, env, info),
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


DEFAULT_MAX_AGENT_FAILURES = 10
"""``agentenv eval --max-agent-failures``: episodes in a row that may end in an agent failure before the run stops."""


class RunStopped(Exception):
    """The run stopped before its last episode; ``result`` holds the episodes that finished, in order.

    ``reason`` is ``"interrupted"`` (Ctrl-C or SIGTERM) or ``"agent failures"`` (too many in a row).
    """

    def __init__(self, reason: str, message: str, result: RunResult) -> None:
        super().__init__(message)
        self.reason = reason
        self.result = result


def collect(
    records: Iterable[dict[str, Any]],
    out: list[dict[str, Any]],
    *,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    max_agent_failures: int | None = DEFAULT_MAX_AGENT_FAILURES,
    bar: Any = None,
) -> str | None:
    """The one episode loop's bookkeeping, shared by local processes and Ray: append each record (in episode
    order) to ``out``, hand it to ``on_record`` (the run directory appends it to ``episodes.jsonl``), and stop
    after ``max_agent_failures`` consecutive agent failures. Returns why it stopped early, or None."""
    in_a_row = 0
    for record in records:
        out.append(record)
        if on_record is not None:
            on_record(record)
        if bar is not None:
            bar.update()
        in_a_row = in_a_row + 1 if record.get("agent_failure") is not None else 0
        if max_agent_failures is not None and in_a_row >= max_agent_failures:
            return (
                f"{in_a_row} episodes in a row ended in an agent failure (last: "
                f"{' '.join(str(record['agent_failure']).split())[:200]})"
            )
    return None


def preflight(agent: Any, info: Mapping[str, Any]) -> None:
    """Run the agent's own start-up check, if it has one, with the ``info`` of a first reset (the llm agent
    asks its endpoint for the model, and for tools when ``info["tools"]`` offers some), so a dead endpoint
    fails once, in seconds, before the first episode."""
    check = getattr(agent, "preflight", None)
    if callable(check):
        check(info)


def check_services(env: Any) -> None:
    """Fail before the first episode when the env's retrieval service does not answer.

    Why: with ``retriever=http://...`` a dead server turned every search into an error
    observation, and the run finished "cleanly" at 0.20 accuracy against 0.80.
    """
    from agentenv.retrieval.client import RetrievalClient

    retriever = getattr(getattr(env, "unwrapped", env), "retriever", None)
    if isinstance(retriever, RetrievalClient) and not retriever.health():
        raise UserInputError(
            f"retriever {retriever.url}: the retrieval service does not answer /health; start it "
            "(agentenv serve-retrieval ...) or leave --env-arg retriever out"
        )


def run(
    config: RunConfig,
    *,
    progress: bool = True,
    start: int = 0,
    on_start: Callable[[RunConfig, Mapping[str, Any]], None] | None = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    max_agent_failures: int | None = DEFAULT_MAX_AGENT_FAILURES,
) -> RunResult:
    """Build, check the agent, then run episodes ``start..N-1``; ``config.episodes=None`` means one pass over
    the tasks.

    ``build_s`` is env construction plus a first reset (in the workers too, with
    ``workers > 1``); ``loop_s`` is the episode loop alone. Episode ``i`` is the same
    for any ``workers``, ``concurrency`` and ``start``. With ``workers > 1`` the records in the result
    are compact (no ``messages``: the workers wrote them into each record's ``episodes.jsonl`` line). ``on_start`` is called with the resolved config and the env's
    metadata (:func:`env_metadata`, with its fingerprint) once the env is built and the agent checked (the run directory writes nothing before), ``on_record`` with
    each record in episode order.

    Raises:
        RunStopped: Ctrl-C (or SIGTERM, which ``agentenv eval`` turns into one), or
            ``max_agent_failures`` agent failures in a row; it holds the finished records.
    """
    begin = time.perf_counter()
    env = build_env(config)
    check_services(env)
    _, first_info = env.reset(seed=config.seed)
    meta = dict(env_metadata(config, env, first_info))
    if config.episodes is None:
        config = replace(config, episodes=meta["n_tasks"])
    jobs = list(enumerate(episode_plan(meta["n_tasks"], config.episodes, config.seed)))[start:]
    agent = build_agent(config)  # a bad name or argument fails here, once
    preflight(agent, first_info)
    if on_start is not None:
        on_start(config, meta)
    records: list[dict[str, Any]] = []
    bar = tqdm(
        total=config.episodes,
        initial=min(start, config.episodes),
        desc=f"{config.agent} on {config.env_id}",
        disable=not progress,
    )
    build_s = 0.0
    stop: str | None = None
    try:
        # An agent that batches episodes (the hf agent's batch_size) asks for that many on threads.
        in_flight = max(config.concurrency, int(getattr(agent, "episodes_in_flight", 1) or 1))
        if in_flight > 1 and config.workers <= 1:
            from agentenv.evaluation.threads import threaded_records

            slots = _thread_slots(replace(config, concurrency=in_flight), len(jobs), env, agent)
            build_s = time.perf_counter() - begin
            with contextlib.closing(threaded_records(jobs, slots, _episode_fn(config))) as finished:
                stop = collect(
                    finished,
                    records,
                    on_record=on_record,
                    max_agent_failures=max_agent_failures,
                    bar=bar,
                )
        elif config.workers <= 1:
            build_s = time.perf_counter() - begin
            stop = collect(
                (run_episode(env, agent, config, *job) for job in jobs),
                records,
                on_record=on_record,
                max_agent_failures=max_agent_failures,
                bar=bar,
            )
        else:
            from agentenv.evaluation.processes import WorkerPool

            with WorkerPool(
                min(config.workers, max(1, len(jobs))),  # 1,000 workers for 2 episodes took 56 s
                functools.partial(_build_pair, config),
                _episode_fn(config),
                concurrency=config.concurrency,
            ) as pool:
                build_s = time.perf_counter() - begin
                stop = collect(
                    pool.records(jobs, env, agent),
                    records,
                    on_record=on_record,
                    max_agent_failures=max_agent_failures,
                    bar=bar,
                )
            env.close()
    except KeyboardInterrupt:
        close = getattr(agent, "close", None)
        if callable(close):  # a batching agent releases the episode threads waiting on it
            close()
        bar.close()
        result = RunResult(config, records, build_s, time.perf_counter() - begin - build_s, meta)
        raise RunStopped("interrupted", "interrupted", result) from None
    except BaseException:
        bar.close()  # its line ends before the error is printed (it shared the bar's line)
        raise
    bar.close()
    result = RunResult(config, records, build_s, time.perf_counter() - begin - build_s, meta)
    if stop is not None:
        raise RunStopped("agent failures", stop, result)
    return result


def timed_run(config: RunConfig, *, progress: bool = True) -> tuple[list[dict[str, Any]], float]:
    """All records and the wall time of the run (:func:`run` with no stop on agent failures)."""
    result = run(config, progress=progress, max_agent_failures=None)
    return result.records, result.wall_s
