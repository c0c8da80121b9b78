"""A forked child keeps the parent's objects out of its collector; the parent's collections are unchanged."""

from __future__ import annotations

import gc
import os
import sys

import pytest

from agentenv.storage.fork_sharing import share_heap_with_forks


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_inherits_a_frozen_heap_and_the_parent_does_not_stay_frozen() -> None:
    gc.unfreeze()  # an earlier test may have frozen this process's heap (the retrieval server does)
    share_heap_with_forks()
    read, write = os.pipe()
    pid = os.fork()
    if (
        pid == 0
    ):  # the child: report how many objects it holds frozen, and whether numpy.ma came with them
        os.close(read)
        os.write(write, f"{gc.get_freeze_count()} {'numpy.ma' in sys.modules}".encode())
        os._exit(0)
    os.close(write)
    frozen, has_ma = os.read(read, 100).decode().split()
    os.close(read)
    os.waitpid(pid, 0)
    assert int(frozen) > 10_000  # every object the parent held
    assert has_ma == str("numpy" in sys.modules)
    assert gc.get_freeze_count() == 0  # unfrozen in the parent right after the fork
