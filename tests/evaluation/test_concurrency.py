"""``agentenv eval --concurrency N``: episodes in flight on threads give the sequential run's results, byte for
byte, and really wait together (a sleeping agent, and the llm agent against a loopback endpoint)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agentenv.cli.main import main
from agentenv.evaluation.agents import AgentFailure, make_agent, register_agent, unregister_agent
from agentenv.evaluation.runner import RunConfig, RunStopped, run

from ..baselines.fake_openai import FakeOpenAI, Reply, call, chat_reply

TIMING = {"wall_time_s", "build_s", "episodes_per_s"}
RUN = ["eval", "MediaSearch-v0", "--split", "validation", "--seed", "3", "--no-progress"]


def _eval(out: Path, *extra: str) -> tuple[list[str], dict[str, Any]]:
    assert main([*RUN, "--out", str(out), *extra]) == 0
    lines = (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return lines, {k: v for k, v in summary.items() if k not in TIMING}


@pytest.mark.parametrize("agent", ["random", "bm25"])
def test_threads_write_what_the_sequential_run_writes(agent: str, tmp_path: Path, capsys) -> None:
    one = _eval(tmp_path / "seq", "--agent", agent, "--episodes", "40")
    threaded = _eval(tmp_path / "thr", "--agent", agent, "--episodes", "40", "--concurrency", "8")
    assert threaded == one  # every line, transcripts included, and the summary's metrics
    assert [json.loads(line)["episode"] for line in one[0]] == list(range(40))


class _InFlight:
    """Counts the agents waiting at once, across threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0

    def wait(self, seconds: float) -> None:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(seconds)
        with self.lock:
            self.now -= 1


class _Sleeping:
    """The bm25 agent, waiting 50 ms before each action as an LLM endpoint would."""

    name = "sleeping-bm25"
    counter = _InFlight()

    def __init__(self) -> None:
        self.inner = make_agent("bm25")

    def reset(self, obs: str, info: Mapping[str, Any], *, task: Any, rng: Any) -> None:
        self.inner.reset(obs, info, task=task, rng=rng)

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        self.counter.wait(0.05)
        return self.inner.act(obs, info)


@pytest.fixture
def sleeping() -> Any:
    _Sleeping.counter = _InFlight()
    register_agent("sleeping-bm25", _Sleeping)
    yield _Sleeping
    unregister_agent("sleeping-bm25")


def test_a_waiting_agent_has_as_many_episodes_in_flight_as_threads(sleeping: Any) -> None:
    config = RunConfig(
        "MediaSearch-v0", "sleeping-bm25", split="validation", episodes=24, seed=1, concurrency=8
    )
    threaded = run(config, progress=False).records
    assert sleeping.counter.most == 8
    sequential = run(
        RunConfig("MediaSearch-v0", "bm25", split="validation", episodes=24, seed=1), progress=False
    ).records
    assert [r["episode"] for r in threaded] == list(range(24))
    assert threaded == sequential


class _Failing:
    name = "failing-threads"

    def reset(self, obs: str, info: Mapping[str, Any], *, task: Any, rng: Any) -> None:
        pass

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        raise AgentFailure("endpoint down")


def test_agent_failures_stop_a_threaded_run_with_the_first_episodes_in_order() -> None:
    register_agent("failing-threads", _Failing)
    try:
        config = RunConfig(
            "MediaSearch-v0", "failing-threads", split="validation", episodes=40, concurrency=4
        )
        with pytest.raises(RunStopped) as stopped:
            run(config, progress=False, max_agent_failures=3)
    finally:
        unregister_agent("failing-threads")
    assert [r["episode"] for r in stopped.value.result.records] == [0, 1, 2]


class _Endpoint:
    """A model behind a loopback OpenAI-compatible server: a search, then an answer read from its result,
    each reply after 50 ms; counts the requests in flight."""

    def __init__(self) -> None:
        self.counter = _InFlight()

    def __call__(self, body: dict[str, Any]) -> Reply:
        self.counter.wait(0.05)
        messages = body["messages"]
        tool = [m for m in messages if m["role"] == "tool"]
        if not tool:
            question = next(m["content"] for m in messages if m["role"] == "user")
            return chat_reply(tool_calls=[call("search", query=" ".join(question.split()[:8]))])
        return chat_reply(
            content=f"<answer>{' '.join(str(tool[-1]['content']).split()[:3])}</answer>"
        )


def test_the_llm_agent_against_a_loopback_endpoint_gives_the_sequential_result(
    tmp_path: Path, capsys
) -> None:
    endpoint = _Endpoint()
    with FakeOpenAI(endpoint, models=["m"]) as server:
        agent = [
            "--agent",
            "llm",
            "--agent-args",
            f"base_url={server.url}",
            "model=m",
            "--episodes",
            "12",
        ]
        one = _eval(tmp_path / "seq", *agent)
        endpoint.counter.most = 0
        threaded = _eval(tmp_path / "thr", *agent, "--concurrency", "6")
    assert threaded == one
    assert all(
        json.loads(line)["turns"] == 2 for line in one[0]
    )  # a search, then an answer: both turns ran
    assert endpoint.counter.most >= 4  # the episodes waited on the endpoint together


def test_threads_inside_worker_processes_write_what_the_sequential_run_writes(
    tmp_path: Path, capsys
) -> None:
    one = _eval(tmp_path / "seq", "--agent", "bm25", "--episodes", "40")
    both = _eval(
        tmp_path / "both",
        "--agent",
        "bm25",
        "--episodes",
        "40",
        "--workers",
        "2",
        "--concurrency",
        "4",
    )
    assert both[0] == one[0]  # every line, transcripts included
    assert {k: v for k, v in both[1].items() if k not in ("workers", "concurrency", "config")} == {
        k: v for k, v in one[1].items() if k not in ("workers", "concurrency", "config")
    }


def test_the_llm_agent_on_workers_with_threads_waits_in_every_worker(
    tmp_path: Path, capsys
) -> None:
    endpoint = _Endpoint()
    with FakeOpenAI(endpoint, models=["m"]) as server:
        agent = [
            "--agent",
            "llm",
            "--agent-args",
            f"base_url={server.url}",
            "model=m",
            "--episodes",
            "16",
        ]
        one = _eval(tmp_path / "seq", *agent)
        endpoint.counter.most = 0
        both = _eval(tmp_path / "both", *agent, "--workers", "2", "--concurrency", "3")
    assert both[0] == one[0]
    assert (
        endpoint.counter.most > 3
    )  # more requests waited together than one worker's three threads hold


@pytest.mark.parametrize(
    "extra", [["--concurrency", "0"], ["--concurrency", "4", "--ray", "local"]]
)
def test_a_bad_concurrency_is_refused_in_one_line(extra: list[str], tmp_path: Path, capsys) -> None:
    assert main([*RUN, "--agent", "random", "--out", str(tmp_path / "run"), *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--concurrency" in err
    assert not (tmp_path / "run").exists()
