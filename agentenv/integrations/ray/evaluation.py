"""``agentenv eval --ray``: the episodes of one run spread over Ray actors, with the records of a local run.

Why the records are the local ones, byte for byte: episode ``i`` is fully
determined by ``(seed, i)`` in :mod:`agentenv.evaluation.runner` (its task
index from one seeded permutation, ``reset(seed=seed + i)``, the agent's
generator from ``(seed, i)``), and each actor runs
:func:`~agentenv.evaluation.runner.run_episode` itself. Actors only change
where an episode runs. Each builds its env from the run's id and kwargs
(``gym.make`` in the actor), never from a pickled env, so an actor on any
node starts from its own corpus cache. Records come back in chunks as they
finish and are handed on in episode order.

Agents are found by name in each actor, so an agent declared in the
``agentenv.agents`` entry-point group needs nothing more; one registered in
code with :func:`~agentenv.evaluation.agents.register_agent` is shipped to the
actors pickled, and one that cannot be pickled is a clear error here.

When actors die, :class:`~agentenv.integrations.ray.dispatch.Dispatcher`
reruns their unfinished chunks elsewhere. A run that still lacks episodes
raises :class:`RunIncomplete`, which names them.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any

from tqdm import tqdm

from agentenv.errors import UserInputError
from agentenv.evaluation.agents import AgentFactory, make_agent
from agentenv.evaluation.runner import (
    DEFAULT_MAX_AGENT_FAILURES,
    RunConfig,
    RunResult,
    RunStopped,
    build_agent,
    build_env,
    collect,
    env_metadata,
    episode_plan,
    make_env,
    preflight,
    run_episode,
)
from agentenv.integrations.ray.cluster import connect, require_ray
from agentenv.integrations.ray.dispatch import Dispatcher

MAX_CHUNK = 32
"""Most episodes per actor call: enough to hide Ray's ~1 ms per call behind fast scripted episodes."""


class EvalWorker:
    """One Ray actor: the run's env and agent, built here, and the episode loop of the local runner."""

    def __init__(self, config: RunConfig, factories: Mapping[str, AgentFactory]) -> None:
        from agentenv.evaluation.agents import register_agent

        for name, factory in factories.items():
            register_agent(name, factory, replace=True)
        self.config = config
        self.env = make_env(config)
        self.env.reset(seed=config.seed)
        self.agent = make_agent(config.agent, **dict(config.agent_args))

    def ready(self) -> dict[str, Any]:
        """Where this actor runs (its env is built once this answers)."""
        ray = require_ray()
        return {
            "pid": os.getpid(),
            "node": ray.get_runtime_context().get_node_id(),
            "ip": ray.util.get_node_ip_address(),
        }

    def run(self, jobs: tuple[tuple[int, int], ...]) -> list[dict[str, Any]]:
        """The records of ``(episode, task_index)`` jobs, in the order given."""
        return [
            run_episode(self.env, self.agent, self.config, episode, index)
            for episode, index in jobs
        ]

    def retriever_url(self) -> str | None:
        """The URL of the retrieval service this actor's env asks, if it asks one."""
        return getattr(getattr(self.env.unwrapped, "retriever", None), "url", None)


class RunIncomplete(RuntimeError):
    """Some episodes could not run (their workers died too often); ``missing`` lists them.

    ``records`` holds the episodes that did run, in episode order, so they are not lost.
    """

    def __init__(
        self,
        missing: list[int],
        task_ids: Mapping[int, str],
        records: list[dict[str, Any]],
        total: int,
    ) -> None:
        self.missing = missing
        self.records = records
        shown = ", ".join(f"{e} ({task_ids[e]})" for e in missing[:10]) + (
            ", …" if len(missing) > 10 else ""
        )
        super().__init__(
            f"{len(missing)} of {total} episodes could not run: their Ray workers died "
            f"and the retries ran out. Missing episodes (task id): {shown}"
        )


def chunk_size(episodes: int, workers: int) -> int:
    """Episodes per actor call: about 16 calls per worker, 1 to :data:`MAX_CHUNK`.

    Example:
        >>> chunk_size(100, 2), chunk_size(10, 4), chunk_size(100_000, 2)
        (4, 1, 32)
    """
    return max(1, min(MAX_CHUNK, math.ceil(episodes / (workers * 16))))


def shippable_factories(agent: str) -> dict[str, AgentFactory]:
    """The factory of ``agent`` if it was registered in code (actors cannot find it by name), checked picklable."""
    from agentenv.evaluation import agents

    factory = agents._REGISTERED.get(agent)
    if factory is None:
        return {}
    try:
        require_ray().cloudpickle.dumps(factory)
    except Exception as err:  # noqa: BLE001 - any pickling failure has the same fix
        raise UserInputError(
            f"agent {agent!r} cannot be sent to Ray workers: its factory does not pickle "
            f"({type(err).__name__}: {err}). Define it at module level in an importable module (or declare it in "
            "the agentenv.agents entry-point group), and keep locks, sockets and open files out of it"
        ) from None
    return {agent: factory}


class RayEvaluation:
    """One ``agentenv eval`` run on the connected Ray cluster; use as a context manager.

    Args:
        config: the run (``config.workers`` is the number of actors).
        max_attempts: times one chunk may be lost with a dying actor before its episodes count as missing.
        max_replacements: actors that may be started after deaths (default: as many as ``config.workers``).
        startup_timeout_s: how long the actors may take to be placed and to build their envs.
        progress: show a progress bar.
    """

    def __init__(
        self,
        config: RunConfig,
        *,
        max_attempts: int = 3,
        max_replacements: int | None = None,
        startup_timeout_s: float = 300.0,
        progress: bool = True,
    ) -> None:
        if config.workers < 1:
            raise UserInputError("--workers must be at least 1")
        self.ray = require_ray()
        if not self.ray.is_initialized():
            raise UserInputError(
                "connect to Ray first: agentenv.integrations.ray.connect('local' or an address)"
            )
        self.progress = progress
        start = time.perf_counter()
        env = build_env(config)
        _, first_info = env.reset(seed=config.seed)
        self.meta = dict(env_metadata(config, env, first_info))
        if config.episodes is None:
            config = replace(config, episodes=self.meta["n_tasks"])
        self.config = config
        self.plan = episode_plan(self.meta["n_tasks"], config.episodes, config.seed)
        tasks = env.unwrapped.tasks
        self.task_ids = {e: tasks[i].id for e, i in enumerate(self.plan)}
        env.close()
        preflight(
            build_agent(config), first_info
        )  # a bad name, argument or endpoint fails here, once
        factories = shippable_factories(config.agent)
        try:
            self.ray.cloudpickle.dumps(config)
        except Exception as err:  # noqa: BLE001
            raise UserInputError(
                f"the run's env kwargs cannot be sent to Ray workers ({err}); pass names, "
                "numbers, strings or URLs (e.g. retriever='http://HOST:PORT')"
            ) from None
        remote = self.ray.remote(num_cpus=1, max_restarts=0)(EvalWorker)
        self.chunk = chunk_size(config.episodes, config.workers)
        self.dispatcher = Dispatcher(
            lambda _: remote.remote(config, factories),
            config.workers,
            "run",
            max_replacements=config.workers if max_replacements is None else max_replacements,
            max_attempts=max_attempts,
            startup_timeout_s=startup_timeout_s,
        )
        self.dispatcher.start()
        self.build_s = time.perf_counter() - start

    def __enter__(self) -> RayEvaluation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the actors."""
        self.dispatcher.close()

    def records(self, start: int = 0) -> Iterator[dict[str, Any]]:
        """The records of episodes ``start..N-1``, in episode order; raises :class:`RunIncomplete` at the end if
        some are missing."""
        jobs = list(enumerate(self.plan))[start:]
        chunks = [tuple(jobs[i : i + self.chunk]) for i in range(0, len(jobs), self.chunk)]
        done: dict[int, dict[str, Any]] = {}  # finished, waiting for the episodes before them
        seen: set[int] = set()
        kept: list[dict[str, Any]] = []
        following = start
        for _, records in self.dispatcher.run(chunks):
            fresh = [r for r in records if r["episode"] not in seen]  # each episode is kept once
            seen.update(r["episode"] for r in fresh)
            done.update((r["episode"], r) for r in fresh)
            while following in done:
                record = done.pop(following)
                kept.append(record)
                yield record
                following += 1
        missing = [e for e, _ in jobs if e >= following]
        if missing:
            finished = kept + [done[e] for e in sorted(done)]
            raise RunIncomplete(
                [e for e in missing if e not in done], self.task_ids, finished, len(jobs)
            )

    def distributed(self) -> dict[str, Any]:
        """What ``summary.json`` records of the cluster side of the run."""
        return {
            "nodes": len(set(self.dispatcher.nodes)),
            "episodes_per_call": self.chunk,
            **self.dispatcher.stats.as_dict(),
        }


def run_on_ray(
    config: RunConfig,
    address: str = "local",
    *,
    progress: bool = True,
    start: int = 0,
    on_start: Callable[[RunConfig, Mapping[str, Any]], None] | None = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    max_agent_failures: int | None = DEFAULT_MAX_AGENT_FAILURES,
    **options: Any,
) -> RunResult:
    """Run ``config`` on Ray (``local``, ``auto`` or an address) and return what :func:`~agentenv.evaluation.runner.run` would.

    ``meta["distributed"]`` adds the address, the nodes used, the episodes per
    actor call, and what fault tolerance cost (actors started and lost, episodes rerun). Ray started here is shut down here; a
    process already connected stays connected. ``options`` go to :class:`RayEvaluation`.

    Episodes ``start..N-1`` run; each record goes to ``on_record`` in episode order as it is ready (the run
    directory appends it), through the same bookkeeping as a local run
    (:func:`~agentenv.evaluation.runner.collect`).

    Raises:
        RunIncomplete: some episodes could not run; it names them and holds the others.
        RunStopped: Ctrl-C, SIGTERM or ``max_agent_failures`` agent failures in a row; it holds what finished.
        UserInputError: Ray is missing, the address answers not, or the agent cannot be sent to workers.
    """
    started = connect(
        address, num_cpus=max(os.cpu_count() or 1, config.workers) if address == "local" else None
    )
    try:
        with RayEvaluation(config, progress=progress, **options) as evaluation:
            if on_start is not None:
                on_start(evaluation.config, evaluation.meta)
            loop_start = time.perf_counter()
            records: list[dict[str, Any]] = []
            bar = tqdm(
                total=evaluation.config.episodes,
                initial=start,
                disable=not progress,
                desc=f"{config.agent} on {config.env_id} (ray)",
            )

            def result() -> RunResult:
                meta = {
                    **evaluation.meta,
                    "distributed": {**evaluation.distributed(), "address": address},
                }
                return RunResult(
                    evaluation.config,
                    records,
                    evaluation.build_s,
                    time.perf_counter() - loop_start,
                    meta,
                )

            try:
                stop = collect(
                    evaluation.records(start),
                    records,
                    on_record=on_record,
                    max_agent_failures=max_agent_failures,
                    bar=bar,
                )
            except KeyboardInterrupt:
                raise RunStopped("interrupted", "interrupted", result()) from None
            finally:
                bar.close()
            if stop is not None:
                raise RunStopped("agent failures", stop, result())
            return result()
    finally:
        if started:
            require_ray().shutdown()
