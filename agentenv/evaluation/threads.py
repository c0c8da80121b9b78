"""Episodes in threads, for agents that wait (an LLM endpoint): ``agentenv eval --concurrency N``.

With ``--workers N`` each worker process runs its own ``--concurrency`` threads
(:mod:`agentenv.evaluation.processes`): ``N x M`` episodes in flight.

Why threads and not processes: an agent that waits on a model endpoint spends
its episode blocked on a socket, and a blocked thread costs a stack, not a
process with its own interpreter and env build. So 64 episodes in flight
need 64 threads here, each with its own env and agent, all sharing the
process's one loaded corpus and index (:mod:`agentenv.retrieval.cache`).
Agents' ``act`` is synchronous (the shipped llm agent blocks on HTTP), which
threads serve as they are; coroutines would need every agent rewritten.

Results are those of the sequential run: episode ``i`` depends on
``(seed, i)`` alone (:mod:`agentenv.evaluation.runner`), and records are
yielded in episode order, so ``episodes.jsonl`` is byte-identical for any
``--concurrency``. Envs and agents are built before the loop, in the calling
thread: builds fill the process's shared caches, which no thread may read
half-built, and their time belongs to ``build_s``, not to the loop.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

EpisodeFn = Callable[[Any, Any, int, int], dict[str, Any]]
"""``(env, agent, episode, task_index) -> record``: the runner's episode function, bound to its config."""


def threaded_records(
    jobs: Iterable[tuple[int, int]],
    slots: list[tuple[Any, Any]],
    episode: EpisodeFn,
    *,
    close: bool = True,
) -> Iterator[dict[str, Any]]:
    """Run ``jobs`` (``(episode, task_index)`` pairs) on one thread per slot; yield records in job order.

    ``slots`` are the ``(env, agent)`` pairs, built beforehand (their build is build time, not loop time);
    each thread takes one on its first episode and keeps it; they are closed when every episode ran. At most
    ``2 * concurrency`` episodes are started ahead of the one awaited, so memory stays bounded. When the
    caller stops reading (an interrupt, too many agent failures), episodes not yet started are dropped and
    those in flight finish in the background; their records are discarded. ``close=False`` keeps the slots
    open for another call (a worker process of ``--workers N --concurrency M`` runs each pool task so).
    """
    if not slots:
        raise ValueError("threaded_records needs at least one (env, agent) slot")
    concurrency = len(slots)
    free = list(slots)
    local = threading.local()
    stop = threading.Event()

    def one(job: tuple[int, int]) -> dict[str, Any] | None:
        if stop.is_set():
            return None
        slot = getattr(local, "slot", None)
        if slot is None:
            slot = local.slot = free.pop()  # list.pop is atomic: each thread gets its own pair
        return episode(slot[0], slot[1], *job)

    pending = iter(jobs)
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="agentenv-episode")
    window: deque[Future[dict[str, Any] | None]] = deque()
    try:
        for job in pending:
            window.append(pool.submit(one, job))
            if len(window) >= 2 * concurrency:
                break
        while window:
            record = window.popleft().result()
            job = next(pending, None)
            if job is not None:
                window.append(pool.submit(one, job))
            if record is not None:
                yield record
    finally:
        stop.set()
        for future in window:
            future.cancel()
        pool.shutdown(wait=False, cancel_futures=True)
        if not window:  # every episode finished: no thread is using an env
            pool.shutdown(wait=True)
            if close:
                for env, _ in slots:
                    env.close()
