"""``agentenv eval --ray``: the records of a local run, nothing lost or doubled when a worker dies, clear errors."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
ray.cloudpickle.register_pickle_by_value(
    __import__("sys").modules[__name__]
)  # workers cannot import tests/

from agentenv.cli.main import main  # noqa: E402
from agentenv.errors import UserInputError  # noqa: E402
from agentenv.evaluation.agents import register_agent, unregister_agent  # noqa: E402
from agentenv.evaluation.runner import RunConfig, run  # noqa: E402
from agentenv.integrations.ray.evaluation import RayEvaluation, RunIncomplete  # noqa: E402

from . import ray_fixtures  # noqa: E402

ray_session, ray_cluster = (
    ray_fixtures.ray_session,
    ray_fixtures.ray_cluster,
)  # the fixtures, for this module

EPISODES = 40
KILL_EPISODES = 24
TIMING = {"wall_time_s", "build_s", "episodes_per_s"}
RAY_ONLY = {"workers", "backend", "distributed"}


def eval_cli(out: Path, agent: str, *extra: str) -> tuple[list[str], dict]:
    code = main(
        [
            "eval",
            "MediaSearch-v0",
            "--agent",
            agent,
            "--split",
            "validation",
            "--episodes",
            str(EPISODES),
            "--seed",
            "7",
            "--out",
            str(out),
            "--no-progress",
            *extra,
        ]
    )
    assert code == 0
    lines = (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    return lines, json.loads((out / "summary.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("agent", ["oracle", "bm25"])
def test_ray_run_equals_local_run(agent: str, ray_cluster, tmp_path: Path, capsys) -> None:
    local_lines, local = eval_cli(tmp_path / "local", agent, "--workers", "1")
    ray_lines, on_ray = eval_cli(tmp_path / "ray", agent, "--workers", "2", "--ray", "local")
    assert len(local_lines) == EPISODES
    assert ray_lines == local_lines  # every record, transcripts included, byte for byte
    assert {k: v for k, v in on_ray.items() if k not in TIMING | RAY_ONLY} == {
        k: v for k, v in local.items() if k not in TIMING | RAY_ONLY
    }
    assert on_ray["metrics"] == local["metrics"]
    assert (
        "backend" not in local and "distributed" not in local
    )  # a local summary.json is as before
    assert (on_ray["backend"], on_ray["workers"]) == ("ray", 2)
    assert (
        on_ray["distributed"]["actors_started"] == 2 and on_ray["distributed"]["actor_deaths"] == 0
    )


def _slow_oracle_factory():
    """An oracle that thinks 10 ms per action, so a worker can be killed mid-run; defined here, sent pickled."""
    from agentenv.baselines.oracle import OracleAgent

    class SlowOracle(OracleAgent):
        def act(self, obs, info):
            time.sleep(0.01)
            return super().act(obs, info)

    return SlowOracle()


@pytest.fixture
def slow_oracle():
    register_agent("slow-oracle-test", _slow_oracle_factory, replace=True)
    yield "slow-oracle-test"
    unregister_agent("slow-oracle-test")


def test_killed_worker_loses_and_duplicates_nothing(ray_cluster, slow_oracle: str) -> None:
    config = RunConfig(
        "MediaSearch-v0", slow_oracle, split="validation", episodes=KILL_EPISODES, seed=7, workers=2
    )
    local = run(
        replace(config, agent="oracle", workers=1), progress=False
    ).records  # the same records, at speed
    records = []
    with RayEvaluation(config, progress=False) as evaluation:
        for record in evaluation.records():
            records.append(record)
            if len(records) == 3:
                ray_cluster.kill(evaluation.dispatcher.actors[0])  # mid-run: it holds queued chunks
        stats = evaluation.dispatcher.stats
    assert [(r["episode"], r["task_id"]) for r in records] == [
        (r["episode"], r["task_id"]) for r in local
    ]
    assert len({r["episode"] for r in records}) == KILL_EPISODES  # none lost, none twice
    assert json.dumps(records) == json.dumps(local)
    assert stats.actor_deaths == 1 and stats.actors_started == 3
    assert stats.jobs_rerun >= 1  # the dead worker's unfinished episodes ran elsewhere


def test_run_that_cannot_finish_names_the_missing_episodes(ray_cluster, slow_oracle: str) -> None:
    config = RunConfig(
        "MediaSearch-v0", slow_oracle, split="validation", episodes=KILL_EPISODES, seed=7, workers=1
    )
    records = []
    with RayEvaluation(config, progress=False, max_replacements=0) as evaluation:
        with pytest.raises(RunIncomplete) as caught:
            for record in evaluation.records():
                records.append(record)
                if len(records) == 1:
                    for actor in list(evaluation.dispatcher.actors):
                        ray_cluster.kill(actor)
    err = caught.value
    assert err.missing and "could not run" in str(err) and str(err.missing[0]) in str(err)
    finished = {r["episode"] for r in err.records}
    assert finished.isdisjoint(err.missing) and finished | set(err.missing) == set(
        range(KILL_EPISODES)
    )


def test_cli_says_which_episodes_are_missing_and_exits_non_zero(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """Workers died for good after episodes 0-2 finished: those stay in episodes.jsonl, the summary says the
    run is incomplete, and --resume would run episodes 3 and 4."""
    from agentenv.integrations.ray import evaluation

    def record(i: int) -> dict:
        return {
            "episode": i,
            "task_id": f"t-{i}",
            "task_index": i,
            "kind": "k",
            "difficulty": "easy",
            "reward": 1.0,
            "terminated": True,
            "truncated": False,
            "reward_components": {"accuracy": 1.0},
            "turns": 1,
            "tool_calls": 0,
            "gold": None,
            "messages": [],
        }

    def incomplete(config, address, **kwargs):
        kwargs["on_start"](config)
        for i in range(3):
            kwargs["on_record"](record(i))
        raise RunIncomplete([3, 4], {3: "t-3", 4: "t-4"}, [record(i) for i in range(3)], 5)

    monkeypatch.setattr(evaluation, "run_on_ray", incomplete)
    out = tmp_path / "run"
    code = main(
        [
            "eval",
            "MediaSearch-v0",
            "--agent",
            "oracle",
            "--episodes",
            "5",
            "--ray",
            "local",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    err = capsys.readouterr().err
    assert code == 4
    assert (
        "2 of 5 episodes could not run" in err and "3 (t-3), 4 (t-4)" in err and "--resume" in err
    )
    assert [
        json.loads(line)["episode"] for line in (out / "episodes.jsonl").read_text().splitlines()
    ] == [0, 1, 2]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is False and summary["episodes"] == 3


def test_agent_that_cannot_be_pickled_is_a_clear_error(ray_cluster) -> None:
    lock = threading.Lock()

    def factory():
        with lock:
            return _slow_oracle_factory()

    register_agent("unpicklable-test", factory, replace=True)
    try:
        with pytest.raises(UserInputError, match="cannot be sent to Ray workers.*module level"):
            RayEvaluation(
                RunConfig("MediaSearch-v0", "unpicklable-test", episodes=2, workers=1),
                progress=False,
            )
    finally:
        unregister_agent("unpicklable-test")


def test_missing_ray_names_the_extra(monkeypatch, capsys) -> None:
    monkeypatch.setitem(__import__("sys").modules, "ray", None)
    code = main(
        [
            "eval",
            "MediaSearch-v0",
            "--agent",
            "oracle",
            "--episodes",
            "2",
            "--ray",
            "local",
            "--no-progress",
        ]
    )
    assert code == 2
    assert 'pip install -e ".[ray]"' in capsys.readouterr().err


def test_unreachable_address_is_a_clear_error(monkeypatch) -> None:
    import ray

    from agentenv.integrations.ray.cluster import connect

    monkeypatch.setattr(
        ray, "is_initialized", lambda: False
    )  # as in a fresh `agentenv eval` process
    monkeypatch.setattr(ray, "init", lambda *a, **k: pytest.fail("ray.init must not be reached"))
    with pytest.raises(UserInputError, match="no Ray cluster answers there.*ray start --head"):
        connect("127.0.0.1:1")
    with pytest.raises(UserInputError, match="expected local, auto, HOST:PORT"):
        connect("not an address")


def test_starting_ray_leaves_this_processs_sigterm_handler_alone(ray_cluster) -> None:
    # ray.init installs a SIGTERM handler that forked children inherit, after which a
    # multiprocessing pool's terminate() cannot stop its workers; the cluster was started
    # through keeping_sigterm, so the handler is still the default one.
    import signal

    from agentenv.integrations.ray.cluster import keeping_sigterm

    assert ray_cluster.is_initialized()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    with keeping_sigterm():
        signal.signal(signal.SIGTERM, lambda *_: None)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
