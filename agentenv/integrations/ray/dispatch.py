"""Run chunks of episodes on a set of Ray actors, and survive actors that die.

Why not ``ray.util.multiprocessing.Pool``: a pool task lost with its worker
is an error there, and the run is lost with it. Here each chunk (a few
episodes) goes to an actor that holds a built env; when an actor dies (its
process was killed, its node went away) every chunk it still held is queued
again for the other actors, and a replacement actor is started while the
budget allows. A chunk lost ``max_attempts`` times, or left with no actor to
run it, is given up and reported in :attr:`Dispatcher.failed`, so the caller
can name the episodes it lacks instead of hanging.

An exception raised *by the episode code* (not by the loss of a worker) is a
bug that would recur anywhere: it is raised in the driver as its original type.

Chunks are small and each actor has at most ``inflight`` of them queued, so
the work balances between fast and slow actors and a death costs little.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from agentenv.errors import UserInputError
from agentenv.integrations.ray.cluster import cluster_cpus, require_ray

Chunk = tuple[Any, ...]
"""One unit of work: the jobs one actor call runs, in order."""


@dataclass
class DispatchStats:
    """What fault tolerance cost: actors started and lost, chunks and jobs run again."""

    actors_started: int = 0
    actor_deaths: int = 0
    chunks_rerun: int = 0
    jobs_rerun: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(vars(self))


class Dispatcher:
    """A set of actors built by ``spawn(index)``; :meth:`run` maps ``method`` over chunks as they finish.

    Args:
        spawn: creates actor number ``index`` (an actor handle with a ``ready()``
            method and the ``method`` to call); called again for replacements.
        workers: actors to keep.
        method: the actor method that takes one chunk and returns its results.
        max_replacements: actors that may be started after deaths, in all.
        max_attempts: times a chunk may be lost with its actor before it is given up.
        inflight: chunks queued on one actor at a time.
        startup_timeout_s: how long the first actors may take to be placed and built.
    """

    def __init__(
        self,
        spawn: Callable[[int], Any],
        workers: int,
        method: str,
        *,
        max_replacements: int,
        max_attempts: int = 3,
        inflight: int = 2,
        startup_timeout_s: float = 300.0,
    ) -> None:
        if workers < 1 or max_attempts < 1 or inflight < 1:
            raise UserInputError("workers, max_attempts and inflight must be at least 1")
        self.ray = require_ray()
        self._spawn = spawn
        self.workers = workers
        self.method = method
        self.max_replacements = max_replacements
        self.max_attempts = max_attempts
        self.inflight = inflight
        self.startup_timeout_s = startup_timeout_s
        self.actors: list[Any] = []
        """Live actors (a test may kill one)."""
        self.failed: list[Chunk] = []
        """Chunks given up on: lost too often, or no actor was left to run them."""
        self.stats = DispatchStats()
        self.nodes: list[str] = []
        """Node ids of the first actors, as they reported."""
        self._load: dict[int, int] = {}

    def start(self) -> float:
        """Create the actors and wait until each has built its env; returns the seconds it took."""
        start = time.perf_counter()
        self.actors = [self._new_actor() for _ in range(self.workers)]
        refs = [actor.ready.remote() for actor in self.actors]
        ready, _ = self.ray.wait(refs, num_returns=len(refs), timeout=self.startup_timeout_s)
        if len(ready) < len(refs):
            self.close()
            raise UserInputError(
                f"only {len(ready)} of {self.workers} Ray workers started within {self.startup_timeout_s:.0f} s; "
                f"the cluster has {cluster_cpus():g} CPUs and each worker takes 1. Lower --workers, or add "
                "nodes with `ray start --address HEAD:PORT`"
            )
        try:
            self.nodes = [str(info.get("node", "")) for info in self.ray.get(refs)]
        except self.ray.exceptions.RayActorError as err:
            self.close()
            raise RuntimeError(f"a Ray worker failed while building its env: {err}") from None
        return time.perf_counter() - start

    def _new_actor(self) -> Any:
        actor = self._spawn(self.stats.actors_started)
        self.stats.actors_started += 1
        self._load[id(actor)] = 0
        return actor

    def run(self, chunks: Sequence[Chunk]) -> Iterator[tuple[Chunk, list[Any]]]:
        """Yield ``(chunk, results)`` as chunks finish (not in order); lost chunks are run again."""
        ray = self.ray
        lost_errors = (
            ray.exceptions.RayActorError,
            ray.exceptions.WorkerCrashedError,
            ray.exceptions.NodeDiedError,
            ray.exceptions.ObjectLostError,
        )
        queue: deque[tuple[int, Chunk]] = deque(enumerate(chunks))
        attempts: dict[int, int] = {}
        pending: dict[Any, tuple[Any, int, Chunk]] = {}
        while queue or pending:
            self._submit(queue, pending)
            if not pending:  # work left, but no actor to run it
                self.failed.extend(chunk for _, chunk in queue)
                queue.clear()
                break
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                actor, index, chunk = pending.pop(ref)
                self._load[id(actor)] = self._load.get(id(actor), 1) - 1
                try:
                    results = ray.get(ref)
                except lost_errors:
                    self._lost(actor)
                    attempts[index] = attempts.get(index, 0) + 1
                    if attempts[index] >= self.max_attempts:
                        self.failed.append(chunk)
                    else:
                        self.stats.chunks_rerun += 1
                        self.stats.jobs_rerun += len(chunk)
                        queue.appendleft((index, chunk))
                    continue
                except ray.exceptions.RayTaskError as err:
                    raise err.as_instanceof_cause() from None
                yield chunk, results

    def _submit(
        self, queue: deque[tuple[int, Chunk]], pending: dict[Any, tuple[Any, int, Chunk]]
    ) -> None:
        """Give queued chunks to the least loaded live actors, up to ``inflight`` each."""
        while queue and self.actors:
            actor = min(self.actors, key=lambda a: self._load[id(a)])
            if self._load[id(actor)] >= self.inflight:
                return
            index, chunk = queue.popleft()
            pending[getattr(actor, self.method).remote(chunk)] = (actor, index, chunk)
            self._load[id(actor)] += 1

    def _lost(self, actor: Any) -> None:
        """An actor's call failed with it: forget it (once) and start a replacement if allowed."""
        if actor not in self.actors:
            return
        self.actors.remove(actor)
        self.stats.actor_deaths += 1
        self.ray.kill(actor)  # it may be merely unreachable: make sure it runs nothing more
        if self.stats.actors_started - self.workers < self.max_replacements:
            self.actors.append(self._new_actor())

    def close(self) -> None:
        """Stop every actor."""
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors = []
