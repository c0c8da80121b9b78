"""Tool time limits in the main thread at the cost of two attribute writes: one watchdog thread.

Why not ``signal.setitimer`` around every call: arming and disarming the
interval timer are two system calls (1.3–1.5 µs together), more than the rest
of a fast tool's step. Here the main thread only writes the running call's
number and deadline; a daemon watchdog thread, started on first use, sleeps
until the deadline of the call in flight (or polls every
:data:`Watchdog.POLL_S` seconds while none is), and when a call overruns it
sends ``SIGALRM`` to the main thread with ``signal.pthread_kill``. The handler
raises :class:`ToolTimeout` inside the tool, but only if that same call is
still running, so a signal that arrives late never hits a later call.

The guarantees are the ones ``setitimer`` gave: a tool that loops in Python
or blocks in a system call (``time.sleep``, a socket read) is interrupted
within about ``POLL_S`` of its limit. Like any Python signal handler, it cannot
interrupt one long C call that holds the GIL. An idle watchdog parks itself
after :data:`Watchdog.IDLE_S` seconds without calls, so a process that stopped
stepping costs nothing; a fork starts a new watchdog in the child on its
first call.

Example:
    >>> import time
    >>> def slow():
    ...     time.sleep(2)
    >>> try:
    ...     WATCHDOG.run(0.1, slow)
    ... except ToolTimeout:
    ...     print("interrupted")
    interrupted
    >>> WATCHDOG.run(1.0, lambda: "fast")
    'fast'
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

R = TypeVar("R")


class ToolTimeout(Exception):
    """Raised inside a tool body when its time limit expires."""


class Watchdog:
    """The process's one watchdog over tool calls in the main thread (see the module docstring)."""

    POLL_S = 0.05
    """How often an idle watchdog looks for a call in flight: the latest a timeout can be noticed."""
    IDLE_S = 2.0
    """Seconds without any call after which the watchdog parks until the next call."""

    def __init__(self) -> None:
        self._call = 0  # number of the call in flight; 0 when none is
        self._deadline = 0.0
        self._issued = 0  # number of the last call started
        self._fired = 0  # number of the call the watchdog interrupted
        self._parked = False
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._handler_installed = False
        self._previous_handler: Any = signal.SIG_DFL
        self._main_ident = 0

    def run(self, timeout_s: float, fn: Callable[..., R], *args: Any) -> R:
        """``fn(*args)`` in the main thread, interrupted with :class:`ToolTimeout` after ``timeout_s``."""
        if self._thread is None:
            self._start()
        number = self._issued = self._issued + 1
        self._deadline = time.monotonic() + timeout_s
        self._call = number
        if self._parked:
            self._wake.set()
        try:
            return fn(*args)
        finally:
            self._call = 0

    def _start(self) -> None:
        if not self._handler_installed:
            self._previous_handler = signal.signal(signal.SIGALRM, self._on_alarm)
            self._handler_installed = True
        self._main_ident = threading.get_ident()
        self._thread = threading.Thread(
            target=self._watch, name="agentenv-tool-watchdog", daemon=True
        )
        self._thread.start()

    def _watch(self) -> None:
        last_seen, idle_since = -1, time.monotonic()
        while True:
            call, deadline = self._call, self._deadline
            now = time.monotonic()
            if call:
                idle_since = now
                if now >= deadline and self._fired != call:
                    self._fired = call
                    signal.pthread_kill(self._main_ident, signal.SIGALRM)
                    continue
                time.sleep(
                    min(max(deadline - now, 0.0), self.POLL_S)
                    if self._fired != call
                    else self.POLL_S
                )
                continue
            if self._issued != last_seen:
                last_seen, idle_since = self._issued, now
            elif now - idle_since > self.IDLE_S:
                self._park()
                last_seen, idle_since = self._issued, time.monotonic()
                continue
            time.sleep(self.POLL_S)

    def _park(self) -> None:
        self._wake.clear()
        self._parked = True
        if not self._call:  # a call that started before _parked was set sees no wake-up: look again
            self._wake.wait()
        self._parked = False

    def _on_alarm(self, signum: int, frame: Any) -> None:
        call = self._call
        if call and call == self._fired:
            raise ToolTimeout
        if callable(self._previous_handler):
            self._previous_handler(signum, frame)

    def _after_fork_in_child(self) -> None:
        # The watchdog thread does not survive a fork; the child starts its own on first use.
        self._thread = None
        self._call = self._fired = 0
        self._parked = False
        self._wake = threading.Event()


WATCHDOG = Watchdog()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=WATCHDOG._after_fork_in_child)
