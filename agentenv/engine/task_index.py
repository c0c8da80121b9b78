"""Where each task id sits in a split: one index per task list and process, kept on disk when it can be.

Why: ``reset(options={"task_id": ...})`` needs the position of an id, and the ids are content
hashes of built tasks (:class:`~agentenv.engine.task.Task`). Each env built its own index on its
first such reset by building every task of the split: 0.75 s for MediaSearch's 24,000 training
questions, 35 s for the rare-disease training split's 32,845 simulated patients, on a served
env's event loop, once per env. So the index belongs to the task list, not the env (every env of
a process over one shared task list uses one), a task list that names what decides its tasks
(``index_key``: a family, split and content checksum, and the package version) is indexed once
per machine and read back from the cache, and :func:`warm_task_positions` lets a server build it
in a background thread at start instead of on a client's first request.

Example:
    >>> from agentenv.engine.task import Task
    >>> tasks = [Task(prompt=p, gold={"answer": p}) for p in ("a", "b")]
    >>> task_positions(tasks) is None  # a plain list: each env keeps its own
    True
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
import weakref
from collections.abc import Sequence
from typing import Any

__all__ = ["task_positions", "warm_task_positions"]

log = logging.getLogger(__name__)

FORMAT = 1
"""On-disk format of a task-id index: a pack whose body is the ids in task order."""
LOG_AFTER_S = 2.0
"""An index that took longer to build says so in the log (it is a one-time cost per machine)."""

_INDEXES: weakref.WeakKeyDictionary[Any, dict[str, int]] = weakref.WeakKeyDictionary()
_LOCKS: weakref.WeakKeyDictionary[Any, threading.Lock] = weakref.WeakKeyDictionary()
_GUARD = threading.Lock()


def task_positions(tasks: Sequence[Any]) -> dict[str, int] | None:
    """``{task id: position}`` of ``tasks``, shared by every caller in the process; ``None`` for a
    task list that cannot be weakly referenced (a plain list: its caller keeps its own).

    A task list with an ``index_key`` string is read from (or written to) the cache under
    ``AGENTENV_HOME/task_ids``; one with an ``index_owner`` shares the index of every list over
    that owner (the rows behind them, in the same order); a concurrent caller waits for the one
    build in progress.
    """
    owner = getattr(tasks, "index_owner", None) or tasks
    try:
        with _GUARD:
            lock = _LOCKS.get(owner)
            if lock is None:
                lock = _LOCKS[owner] = threading.Lock()
    except TypeError:
        return None
    with lock:
        index = _INDEXES.get(owner)
        if index is None:
            index = _INDEXES[owner] = _load_or_build(tasks)
    return index


def warm_task_positions(tasks: Sequence[Any]) -> threading.Thread | None:
    """Index ``tasks`` in a daemon thread (a server at start), so no request waits for a build
    unless it comes first; ``None`` when there is nothing to share."""
    try:
        weakref.ref(getattr(tasks, "index_owner", None) or tasks)
    except TypeError:
        return None
    thread = threading.Thread(
        target=task_positions, args=(tasks,), name="agentenv-task-index", daemon=True
    )
    thread.start()
    return thread


def _load_or_build(tasks: Sequence[Any]) -> dict[str, int]:
    from agentenv import __version__
    from agentenv.storage.checksummed_cache import unpack, write_pack
    from agentenv.storage.paths import CacheNotWritableError

    key = getattr(tasks, "index_key", None)
    header = {"format": FORMAT, "key": key, "version": __version__, "count": len(tasks)}
    path = None
    if isinstance(key, str):
        name = hashlib.sha256(f"{key}|{__version__}".encode()).hexdigest()[:32]
        try:
            path = _task_ids_dir() / f"{name}.json"
        except CacheNotWritableError:
            path = None
        stored = unpack(path, header) if path is not None else None
        if isinstance(stored, list) and len(stored) == len(tasks):
            return {task_id: i for i, task_id in enumerate(stored)}
    started = time.perf_counter()
    ids = _build_ids(tasks)
    took = time.perf_counter() - started
    if took > LOG_AFTER_S:
        log.info("indexed the ids of %d tasks in %.1f s (once per machine)", len(ids), took)
    if path is not None:
        try:
            write_pack(path, header, ids)
        except OSError as err:  # a read-only home: the index stays in memory
            log.warning("could not keep the task-id index at %s: %s", path, err)
    return {task_id: i for i, task_id in enumerate(ids)}


def _build_ids(tasks: Sequence[Any]) -> list[str]:
    """Every task's id, in order: each task is built (the cost the cache saves)."""
    return [tasks[i].id for i in range(len(tasks))]


def _task_ids_dir() -> Any:
    """Where task-id indexes are kept: ``AGENTENV_HOME/task_ids``."""
    from agentenv.storage.paths import cache_dir

    return cache_dir("task_ids")
