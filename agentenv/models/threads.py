"""One deliberate CPU thread policy for every path that runs a model (eval, SFT, GRPO, benchmarks).

Why: measured on 2 shared cores, torch with 2 threads decoded SmolLM2-135M at 0.5 tokens/s while
another job ran, against 5.5 with one thread; OpenMP's default busy-waiting is what hurts, and
``OMP_WAIT_POLICY=PASSIVE`` gave 6.7. The wait policy is read once, when torch's OpenMP runtime
starts, so it can only be set before torch is imported: :func:`apply_thread_policy` sets it then
(unless the user set it), and otherwise says in the returned note that it came too late.

Example:
    >>> import os
    >>> choose_threads(3), choose_threads(None, environ={"OMP_NUM_THREADS": "1"})
    (3, 1)
    >>> choose_threads(None, environ={}) == max(1, min(len(os.sched_getaffinity(0)), 4))
    True
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

__all__ = ["PASSIVE_ADVICE", "apply_thread_policy", "choose_threads"]

PASSIVE_ADVICE = (
    "set OMP_WAIT_POLICY=PASSIVE (and OMP_NUM_THREADS=1 on a busy machine) before starting: "
    "torch's OpenMP threads otherwise spin while waiting, which on a shared CPU was 10x slower"
)

MAX_DEFAULT_THREADS = 4
"""More threads than this gain little for a 135M model on CPU and hurt neighbours."""


def choose_threads(threads: int | None, *, environ: Mapping[str, str] | None = None) -> int:
    """``threads`` when given; else ``OMP_NUM_THREADS``; else the usable cores, at most 4."""
    if threads is not None:
        return max(1, int(threads))
    env = os.environ if environ is None else environ
    given = env.get("OMP_NUM_THREADS", "").strip()
    if given.isdigit() and int(given) > 0:
        return int(given)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_DEFAULT_THREADS))


def apply_thread_policy(threads: int | None = None) -> str:
    """Set torch's intra-op threads (and the passive wait policy if torch is not loaded yet).

    Returns a one-line note of what was set, for logs and run records.
    """
    late = "torch" in sys.modules
    if not late:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import torch

    n = choose_threads(threads)
    torch.set_num_threads(n)
    policy = os.environ.get("OMP_WAIT_POLICY", "unset")
    note = f"torch threads={n}, OMP_WAIT_POLICY={policy}"
    if late and policy.upper() != "PASSIVE":
        note += f" (torch was already loaded: {PASSIVE_ADVICE})"
    return note
