"""Say what a slow first-use build is doing, so a cold start is never silent.

Why a delayed line instead of a bar everywhere: most builds are cached and
take milliseconds, and a line for each would be noise. :func:`build_step`
prints nothing for a step that ends within ``after_s`` seconds; a longer one
gets a line when it passes that mark and another with its time when it ends,
on stderr, so piped stdout (JSON, tables) stays clean.

Example:
    >>> with build_step("nothing slow", after_s=60):
    ...     pass
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO


@contextmanager
def build_step(label: str, *, after_s: float = 1.0, stream: TextIO | None = None) -> Iterator[None]:
    """Announce ``label`` on stderr if the step lasts longer than ``after_s`` seconds, then its time."""
    out = stream if stream is not None else sys.stderr
    start = time.perf_counter()
    announced = threading.Event()

    def announce() -> None:
        announced.set()
        print(f"agentenv: {label} (first use; cached afterwards) ...", file=out, flush=True)

    timer = threading.Timer(after_s, announce)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        if announced.is_set():
            print(
                f"agentenv: {label}: done in {time.perf_counter() - start:.1f} s",
                file=out,
                flush=True,
            )
