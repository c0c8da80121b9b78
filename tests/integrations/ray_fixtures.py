"""A local Ray cluster for the Ray tests: 2 CPUs, no dashboard, started once and shut down at the end.

Imported by the ``test_ray_*`` modules
(``from .ray_fixtures import ray_cluster, ray_session``). The cluster is
started lazily by the first test that asks for it and again if a test stopped
it: the CLI test starts a head node of its own with ``ray start`` and must
``ray stop`` it, which stops every Ray process of this machine, so it shuts
this cluster down first, whatever order the tests run in.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

LIGHT_RAY = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_DEDUP_LOGS": "0"}
"""Environment that keeps a test cluster quiet and offline."""


@pytest.fixture(scope="session")
def ray_session() -> Iterator[Any]:
    """The ``ray`` module; whatever cluster this process holds at the end of the session is shut down."""
    ray = pytest.importorskip("ray")
    for key, value in LIGHT_RAY.items():
        os.environ.setdefault(key, value)
    yield ray
    if ray.is_initialized():
        ray.shutdown()


@pytest.fixture
def ray_cluster(ray_session: Any) -> Any:
    """The ``ray`` module, connected to a local 2-CPU cluster (started on first use)."""
    if not ray_session.is_initialized():
        from agentenv.integrations.ray.cluster import keeping_sigterm

        with keeping_sigterm():  # forked pools in later tests must still die on terminate()
            ray_session.init(
                num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="warning"
            )
    return ray_session
