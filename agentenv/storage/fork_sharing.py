"""Forked children keep sharing the parent's Python objects: the collector leaves them alone across a fork.

Why: a forked child (a worker of an async vector env, of ``agentenv eval
--workers``, of the retrieval server) shares the parent's memory copy-on-write,
but CPython's cyclic garbage collector writes into the header of every object
it examines, so the child's first full collection copies every page that holds
a container object: the loaded catalog, task lists, vocabularies. Measured on a
worker of an async ``MediaSearch-v0``: 33 MB of private memory, 17 MB with
this.

``gc.freeze()`` just before the fork moves every object to a permanent
generation that collections skip; the parent unfreezes right after, so its own
collections are unchanged. The child keeps them frozen: it inherited them
alive, and a cycle among them that becomes garbage in the child is not
collected (it costs at most what the parent held). Python's ``gc`` docs
recommend this for pre-fork servers. A parent that froze its heap itself
(:func:`agentenv.retrieval.server.serve`) stays frozen.

Before the fork, ``numpy.ma`` is imported too, when numpy is: numpy imports it
at the first ``np.unique`` call, which a rare-disease env makes at its first
reset (drawing a patient), so every worker imported it for itself: 6 MB each.

Example:
    >>> share_heap_with_forks()
    >>> share_heap_with_forks()  # registered once per process, whatever calls it
"""

from __future__ import annotations

import gc
import os
import sys
import threading

__all__ = ["share_heap_with_forks"]

_lock = threading.Lock()
_registered = False
_froze: list[bool] = [False]
"""Whether the last fork's freeze was ours (the permanent generation was empty before it)."""


def _before_fork() -> None:
    if (
        "numpy" in sys.modules and "numpy.ma" not in sys.modules
    ):  # runs before the fork takes the import lock
        import numpy.ma  # noqa: F401 - imported here once, not in every child
    _froze[0] = gc.get_freeze_count() == 0
    gc.freeze()


def _after_fork_in_parent() -> None:
    if _froze[0]:
        gc.unfreeze()


def share_heap_with_forks() -> None:
    """Register, once per process, the freeze before every fork and the unfreeze after it in the parent.

    Called by what loads large read-only state that forked workers will use (the index cache, the
    phenotype ranker's arrays), so that ``import agentenv`` alone changes nothing.
    """
    global _registered
    with _lock:
        if _registered or not hasattr(os, "register_at_fork"):
            return
        os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent)
        _registered = True
