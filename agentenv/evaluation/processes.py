"""Episodes on worker processes (``agentenv eval --workers N``), adding throughput instead of overhead.

Why it is built this way: ``--workers 2`` used to be slower than one process
for a scripted agent, because every record's whole transcript was pickled
through the pool and encoded again in the parent. Now:

* each worker builds its env and agent once (forked, it finds the parent's
  loaded corpus and index in :mod:`agentenv.retrieval.cache`, so a build
  costs milliseconds);
* a worker renders each record's ``episodes.jsonl`` line itself and sends it
  with a compact record (no ``messages``), so the parent only writes lines;
* the episodes per pool task are sized by time: the parent runs the first
  episodes itself and times them, so fast scripted episodes travel 32 to a
  message (the pool costs about a millisecond per message in the parent),
  while slow ones (an LLM endpoint) travel one by one and reach the run
  directory as they finish.

With ``concurrency > 1`` (``--workers N --concurrency M``) each worker builds
``M`` envs and agents and runs each pool task's episodes on ``M`` threads
(:func:`~agentenv.evaluation.threads.threaded_records`): ``N x M`` episodes in
flight, for agents that wait on an endpoint faster than one process can keep up
with. A pool task then holds at least ``M`` episodes, so every thread has one.

Records come back in episode order, so ``episodes.jsonl`` is byte-identical
for any number of workers and threads.
"""

from __future__ import annotations

import multiprocessing as mp
import signal
import time
from collections.abc import Callable, Iterator
from typing import Any

import gymnasium as gym

from agentenv.evaluation.run_dir import record_line, rendered

CHUNK_S = 0.05
"""Target time of one pool task: long enough to amortise the pool's per-message cost, short enough that a
finished episode reaches ``episodes.jsonl`` soon."""
MAX_CHUNK = 32
PROBES = 2
"""Episodes the parent runs itself to time them (the first may pay one-off warm-ups)."""

EpisodeFn = Callable[[gym.Env, Any, int, int], dict[str, Any]]

_WORKER: dict[str, Any] = {}


def _worker_init(
    build: Callable[[], tuple[gym.Env, Any]],
    episode: EpisodeFn,
    ready: Any = None,
    concurrency: int = 1,
) -> None:
    # Ctrl-C reaches the whole process group: the parent alone stops the run and writes what finished,
    # so a worker ignores SIGINT and dies quietly on the SIGTERM of pool.terminate().
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _WORKER["env"], _WORKER["agent"] = build()
    # Built here, before any thread runs: builds fill the process's shared caches (see evaluation.threads).
    _WORKER["slots"] = [
        (_WORKER["env"], _WORKER["agent"]),
        *(build() for _ in range(concurrency - 1)),
    ]
    _WORKER["episode"] = episode
    if ready is not None:
        ready.wait()  # every worker has built its env before any episode is timed


def _worker_ready(_: int) -> None:
    return None


def _worker_run(job: tuple[int, int]) -> tuple[dict[str, Any], str]:
    """One episode in a worker: its compact record (no ``messages``) and its ``episodes.jsonl`` line, rendered
    here so the transcript crosses the pool as one string and is encoded once, in parallel."""
    record = _WORKER["episode"](_WORKER["env"], _WORKER["agent"], *job)
    line = record_line(record)
    del record["messages"]
    return record, line


def _worker_run_threaded(jobs: list[tuple[int, int]]) -> list[tuple[dict[str, Any], str]]:
    """A pool task of ``--concurrency M`` episodes and more, run on the worker's ``M`` threads; results in job
    order, each as :func:`_worker_run` returns it."""
    from agentenv.evaluation.threads import threaded_records

    out = []
    for record in threaded_records(jobs, _WORKER["slots"], _WORKER["episode"], close=False):
        line = record_line(record)
        del record["messages"]
        out.append((record, line))
    return out


def chunksize(jobs: int, workers: int, episode_s: float) -> int:
    """Episodes per pool task: about :data:`CHUNK_S` of work (at most :data:`MAX_CHUNK`), and at least four
    tasks per worker, so that a short run still splits evenly between the workers.

    >>> chunksize(1000, 2, 0.0015), chunksize(1000, 2, 0.04), chunksize(60, 2, 0.001)
    (32, 1, 7)
    """
    by_time = int(CHUNK_S / episode_s) if episode_s > 0 else MAX_CHUNK
    return max(1, min(MAX_CHUNK, by_time, jobs // (4 * workers)))


class WorkerPool:
    """``workers`` forked (or spawned) processes, each holding the ``(env, agent)`` that ``build`` makes.

    Use it as a context manager; :meth:`records` runs the jobs. ``build`` and ``episode`` must be
    picklable where the platform has no ``fork``.
    """

    def __init__(
        self,
        workers: int,
        build: Callable[[], tuple[gym.Env, Any]],
        episode: EpisodeFn,
        concurrency: int = 1,
    ) -> None:
        ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        ready = ctx.Barrier(workers)
        self.workers = workers
        self.concurrency = concurrency
        self.episode = episode
        self._pool = ctx.Pool(
            workers, initializer=_worker_init, initargs=(build, episode, ready, concurrency)
        )

    def __enter__(self) -> WorkerPool:
        self._pool.__enter__()
        self._pool.map(
            _worker_ready, range(self.workers), chunksize=1
        )  # returns once every worker is built
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.__exit__(*exc)

    def records(
        self, jobs: list[tuple[int, int]], env: gym.Env, agent: Any
    ) -> Iterator[dict[str, Any]]:
        """The jobs' records in order: the first (up to :data:`PROBES`, fewer once one is slow) run here on
        ``env`` and ``agent`` and are timed; the rest run on the workers in chunks sized from that time."""
        episode_s = 0.0
        probes = 0
        while probes < min(PROBES, len(jobs)) and episode_s < CHUNK_S:
            start = time.perf_counter()
            record = self.episode(env, agent, *jobs[probes])
            episode_s = time.perf_counter() - start
            probes += 1
            yield record
        rest = jobs[probes:]
        if (
            rest and self.concurrency > 1
        ):  # tasks of at least one episode per thread, run on the threads
            size = max(
                self.concurrency, chunksize(len(rest), self.workers, episode_s / self.concurrency)
            )
            tasks = [rest[i : i + size] for i in range(0, len(rest), size)]
            for done in self._pool.imap(_worker_run_threaded, tasks):
                for record, line in done:
                    yield rendered(record, line)
        elif rest:
            size = chunksize(len(rest), self.workers, episode_s)
            for record, line in self._pool.imap(_worker_run, rest, chunksize=size):
                yield rendered(record, line)
