"""The retrieval index as a Ray actor: one service feeds two eval workers, with the records of an in-process index."""

from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import replace

import pytest

pytest.importorskip("ray")
pytest.importorskip("uvicorn")

from agentenv.errors import UserInputError  # noqa: E402
from agentenv.evaluation.runner import RunConfig, run  # noqa: E402
from agentenv.integrations.ray.evaluation import RayEvaluation  # noqa: E402
from agentenv.integrations.ray.retrieval import start_retrieval_service  # noqa: E402
from agentenv.retrieval.client import RetrievalClient  # noqa: E402

from . import ray_fixtures  # noqa: E402

ray_session, ray_cluster = (
    ray_fixtures.ray_session,
    ray_fixtures.ray_cluster,
)  # the fixtures, for this module


def search_calls(records: list[dict]) -> int:
    return sum(
        1
        for r in records
        for m in r["messages"]
        if m["role"] == "assistant"
        for call in m.get("tool_calls") or []
        if call["function"]["name"] == "search"
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def gone(pid: int, timeout_s: float = 30.0) -> None:
    """Wait until process ``pid`` (on this machine) has exited."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    pytest.fail(f"process {pid} still runs")


def test_one_service_is_shared_by_two_workers_and_survives_a_restart(ray_cluster) -> None:
    # A fixed port and a restart budget: Ray brings a dead service back at the same URL; the URL carries
    # a 30 s retry deadline, so clients wait for it with bounded backoff. No CPU: the test cluster has 2.
    service = start_retrieval_service(
        "media", host="loopback", port=free_port(), max_restarts=1, client_deadline_s=30, num_cpus=0
    )
    base_url = service.url.split("?")[0]
    try:
        config = RunConfig(
            "MediaSearch-v0",
            "bm25",
            split="validation",
            episodes=12,
            seed=3,
            workers=2,
            env_kwargs=(("retriever", service.url),),
        )
        with RayEvaluation(config, progress=False) as evaluation:
            urls = ray_cluster.get(
                [actor.retriever_url.remote() for actor in evaluation.dispatcher.actors]
            )
            records = list(evaluation.records())
        stats = service.stats()
        ray_cluster.kill(service.actor, no_restart=False)  # the service dies; Ray restarts it
        gone(stats["pid"])
        hits = RetrievalClient(service.url).search(
            "Casablanca", 3
        )  # retried until it answers again
        restarted = service.stats()
    finally:
        service.stop()
    assert base_url.startswith("http://127.0.0.1:")
    assert urls == [base_url, base_url]  # both workers ask the one service
    assert stats["queries"] == search_calls(records) > 0  # every search was answered by it
    assert (
        hits and restarted["pid"] != stats["pid"] and restarted["queries"] == 1
    )  # a new process answered
    in_process = run(replace(config, workers=1, env_kwargs=()), progress=False).records
    assert json.dumps(records) == json.dumps(in_process)  # the served index gives the same episodes


def test_service_refuses_every_interface_and_restarts_need_a_port(ray_cluster) -> None:
    with pytest.raises(UserInputError, match="no authentication"):
        start_retrieval_service("media", host="0.0.0.0")
    with pytest.raises(UserInputError, match="fixed port"):
        start_retrieval_service("media", max_restarts=2)
