"""Keep N forked server processes running: restart the ones that die.

A worker can die for reasons that have nothing to do with the others (the
OOM killer, a stray ``kill``, a crash in a native library). Stopping the
whole server then would turn one lost process into an outage for every env
worker; restarting it keeps the survivors serving meanwhile and brings the
capacity back in a fraction of a second, because the index is already
built in the supervisor's memory and the new fork shares it.

A worker that keeps dying (``max_restarts`` within ``restart_window_s``)
is a bug, not bad luck: then everything stops with an error naming the
exit codes, instead of forking forever.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from collections import deque
from collections.abc import Callable

logger = logging.getLogger(__name__)

Spawn = Callable[[int], int]
"""``spawn(slot)`` forks the worker for ``slot`` (0..N-1) and returns its pid (parent side)."""


def describe_exit(status: int) -> str:
    """``exited with 1`` / ``exited with -9``: the code as ``os.waitstatus_to_exitcode`` gives it."""
    return f"exited with {os.waitstatus_to_exitcode(status)}"


def reset_child_signals() -> None:
    """In a freshly forked worker: drop the supervisor's handlers before serving.

    The child inherits the supervisor's SIGTERM handler, which would signal
    the worker's siblings; the worker's server installs its own handlers.
    """
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def supervise(
    spawn: Spawn,
    workers: int,
    *,
    max_restarts: int = 10,
    restart_window_s: float = 60.0,
    on_restart: Callable[[int, int], None] | None = None,
) -> None:
    """Run ``workers`` processes from ``spawn`` until SIGINT/SIGTERM, restarting dead ones.

    Returns after a signal once every worker has exited. ``on_restart(old_pid,
    new_pid)`` is called after each restart (for logs and tests).

    Raises:
        RuntimeError: when more than ``max_restarts`` restarts happen within
            ``restart_window_s`` (every worker is stopped first), or when a
            worker ends badly while stopping.
    """
    slots: dict[int, int] = {}  # pid -> slot
    stopping = False
    restarts: deque[float] = deque()
    failures: list[str] = []
    unclean: list[str] = []

    def stop_all(*_: object) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(slots):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    previous = {sig: signal.signal(sig, stop_all) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        for slot in range(workers):
            if stopping:
                break
            slots[spawn(slot)] = slot
        while slots:
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            slot = slots.pop(pid, None)
            if slot is None:
                continue
            code = os.waitstatus_to_exitcode(status)
            # uvicorn re-raises the signal that stopped it: -SIGTERM is a clean stop.
            if stopping:
                if code not in (0, -signal.SIGTERM, -signal.SIGINT):
                    unclean.append(f"worker {pid} {describe_exit(status)}")
                continue
            now = time.monotonic()
            restarts.append(now)
            while restarts and restarts[0] < now - restart_window_s:
                restarts.popleft()
            failures.append(f"worker {pid} {describe_exit(status)}")
            if len(restarts) > max_restarts:
                logger.error(
                    "retrieval server: %d worker restarts within %g s; stopping",
                    len(restarts),
                    restart_window_s,
                )
                stop_all()
                continue
            logger.warning(
                "retrieval server worker %d %s; restarting it", pid, describe_exit(status)
            )
            new_pid = spawn(slot)
            slots[new_pid] = slot
            if on_restart is not None:
                on_restart(pid, new_pid)
            if stopping:  # a signal arrived while forking: stop the new one too
                stop_all()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if len(restarts) > max_restarts:
        raise RuntimeError(
            "retrieval server stopped: workers keep dying: "
            + "; ".join(failures[-(max_restarts + 1) :])
        )
    if unclean:
        raise RuntimeError("retrieval server stopped: " + "; ".join(unclean))
