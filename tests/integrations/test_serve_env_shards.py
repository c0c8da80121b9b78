"""``serve-env --protocol verl-tool --workers 2``: the same answers as one process, byte for byte, and its own limits.

Both servers are real uvicorn servers on loopback; the sharded one runs two worker processes,
each owning the trajectory ids that hash to it. The requests mix ids of both workers in one
body, so every answer is joined from two workers' parts.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import gymnasium as gym
import pytest

pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

import agentenv  # noqa: E402, F401 - registers the ids
from agentenv.engine.actions import answer, tool_call  # noqa: E402
from agentenv.integrations.serve_env.answer_body import CHUNK_BYTES  # noqa: E402
from agentenv.integrations.serve_env.limits import EnvServerLimits  # noqa: E402
from agentenv.integrations.serve_env.runner import BackgroundServer  # noqa: E402
from agentenv.integrations.serve_env.shard_wire import shard_of  # noqa: E402
from agentenv.integrations.serve_env.shard_worker import PART_BYTES  # noqa: E402
from agentenv.integrations.serve_env.shards import ShardedVerlToolApp  # noqa: E402
from agentenv.integrations.verl_tool import create_app  # noqa: E402

LIMITS = EnvServerLimits(max_live_envs=8, max_actions_per_request=8, max_body_bytes=65536)
SEARCH = tool_call("search", query="heat")


def ids_of(worker: int, count: int, prefix: str) -> list[str]:
    """``count`` trajectory ids that worker ``worker`` of 2 owns."""
    found = [f"{prefix}-{i}" for i in range(200) if shard_of(f"{prefix}-{i}", 2) == worker]
    return found[:count]


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[BackgroundServer, BackgroundServer]]:
    one_process = create_app("MediaSearch-v0", split="test", env_kwargs={}, limits=LIMITS)
    sharded = ShardedVerlToolApp("MediaSearch-v0", workers=2, split="test", limits=LIMITS)
    with BackgroundServer(one_process, LIMITS) as one, BackgroundServer(sharded, LIMITS) as two:
        yield one, two


def both(
    servers: tuple[BackgroundServer, BackgroundServer], body: dict
) -> tuple[tuple[int, bytes], tuple[int, bytes]]:
    """(status, body) from each server for the same request."""
    out = []
    for server in servers:
        reply = httpx.post(server.url + "/get_observation", json=body, timeout=30)
        out.append((reply.status_code, reply.content))
    return out[0], out[1]


def test_requests_across_both_workers_get_the_one_process_answers(
    servers: tuple[BackgroundServer, BackgroundServer],
) -> None:
    a, b = ids_of(0, 3, "same"), ids_of(1, 3, "same")
    env = gym.make("MediaSearch-v0", split="test")
    env.reset(seed=1, options={"index": 4})
    oracle = answer(str(env.unwrapped.task.gold))
    starts = [{"seed": i, "index": 4 if i == 1 else i, "return_messages": i == 3} for i in range(4)]
    script = [
        {  # four new trajectories, two per worker: a search, unreadable text, a bad call, an answer
            "trajectory_ids": [a[0], b[0], a[1], b[1]],
            "actions": [SEARCH, "no tags here", tool_call("search", k="x"), answer("Heat")],
            "extra_fields": starts,
        },
        {  # the oracle ends one, finish ends another, one already ended, one goes on
            "trajectory_ids": [b[0], a[0], b[1], a[1]],
            "actions": [oracle, "", SEARCH, tool_call("get_title", title_id="tt0113277")],
            "finish": [False, True, False, False],
            "is_last_step": [False, False, False, True],
        },
        {"trajectory_ids": [a[0], a[1]], "actions": [SEARCH, SEARCH]},  # both ended: errors
        # One bad start field (position 1): the whole request is refused, nothing starts.
        {
            "trajectory_ids": [a[2], b[2]],
            "actions": [SEARCH, SEARCH],
            "extra_fields": [{"index": 1}, {"seed": "x"}],
        },
        # One start the env refuses (worker 1's item): worker 0's start is undone and forgotten.
        {
            "trajectory_ids": [a[2], b[2]],
            "actions": [SEARCH, SEARCH],
            "extra_fields": [{"index": 1}, {"index": 10**6}],
        },
        {  # extra_fields nested past the protocol's bound: one 422, and the workers serve on
            "trajectory_ids": [a[2], b[2]],
            "actions": [SEARCH, SEARCH],
            "extra_fields": [{"index": 1}, {"junk": json.loads("[" * 40 + "]" * 40)}],
        },
        {  # so both ids start afresh here
            "trajectory_ids": [a[2], b[2]],
            "actions": [answer("x"), SEARCH],
            "extra_fields": [{"index": 2}, {"index": 3}],
        },
    ]
    for number, body in enumerate(script):
        one, two = both(servers, body)
        assert two == one, f"request {number}"
    one, two = both(servers, {"trajectory_ids": ["never"], "actions": [""], "finish": [True]})
    assert two == one
    again = ids_of(0, 4, "again")
    first = json.loads(both(servers, script[0] | {"trajectory_ids": again})[1][1])
    assert first["observations"][3]["messages"], "return_messages is read by the worker"
    everything = [*a, *b, *again]  # leave no live trajectory to the next test
    for part in (everything[:5], everything[5:]):
        done = {"trajectory_ids": part, "actions": [""] * 5, "finish": [True] * 5}
        assert both(servers, done)[1][0] == 200


FLOOD = tool_call("find_person", name="john") * 32
"""An action at the limits of one step: its observation is about 50 KB."""


def test_one_workers_requests_and_long_answers_get_the_one_process_answers(
    servers: tuple[BackgroundServer, BackgroundServer],
) -> None:
    """Requests whose ids are all one worker's go as one message (start, then step), refusals
    included; answers longer than the worker's parts and the front's pieces are the same bytes."""
    a, b = ids_of(0, 5, "one"), ids_of(1, 4, "one")
    script = [
        {"trajectory_ids": a[:1], "actions": [SEARCH], "extra_fields": [{"seed": 0, "index": 1}]},
        {  # a bad start field: refused, nothing starts
            "trajectory_ids": a[1:3],
            "actions": [SEARCH, SEARCH],
            "extra_fields": [{"index": 1}, {"seed": "x"}],
        },
        {  # a start the env refuses: the other is undone and forgotten
            "trajectory_ids": a[1:3],
            "actions": [SEARCH, SEARCH],
            "extra_fields": [{"index": 1}, {"index": 10**6}],
        },
        {  # so both start afresh here; one ends at once
            "trajectory_ids": a[1:3],
            "actions": [answer("x"), SEARCH],
            "extra_fields": [{"index": 2}, {"index": 3}],
        },
        {"trajectory_ids": [a[0], *a[2:5]], "actions": [FLOOD] * 4},  # ~200 KB, one worker
        {"trajectory_ids": [a[0], *a[2:5], *b], "actions": [FLOOD] * 8},  # ~400 KB, both
    ]
    sizes = []
    for number, body in enumerate(script):
        one, two = both(servers, body)
        assert two == one, f"request {number}"
        sizes.append(len(one[1]))
    assert sizes[-2] > PART_BYTES and sizes[-1] > CHUNK_BYTES, sizes
    everything = [a[0], *a[2:5], *b]
    for part in (everything[:5], everything[5:]):
        done = {"trajectory_ids": part, "actions": [""] * len(part), "finish": [True] * len(part)}
        assert both(servers, done)[1][0] == 200


def test_the_cap_is_split_between_workers_and_a_refusal_starts_nothing(
    servers: tuple[BackgroundServer, BackgroundServer],
) -> None:
    sharded = servers[1]
    mine = ids_of(0, 5, "cap")
    body = {"trajectory_ids": mine, "actions": [SEARCH] * 5}
    reply = httpx.post(sharded.url + "/get_observation", json=body, timeout=30)
    assert reply.status_code == 503 and reply.headers["retry-after"] == "1"
    assert "limit of 4 live trajectories" in reply.json()["error"]
    other = ids_of(1, 1, "cap")
    body = {"trajectory_ids": [*mine[:4], *other], "actions": [SEARCH] * 5}
    reply = httpx.post(sharded.url + "/get_observation", json=body, timeout=30)
    assert reply.status_code == 200 and reply.json()["dones"] == [False] * 5
    info = httpx.get(sharded.url + "/info", timeout=30).json()
    assert info["workers"] == 2 and info["live_trajectories"] >= 5
    finish = {"trajectory_ids": [*mine[:4], *other], "actions": [""] * 5, "finish": [True] * 5}
    assert httpx.post(sharded.url + "/get_observation", json=finish, timeout=30).status_code == 200


def test_a_worker_that_exits_is_a_503_and_unhealthy() -> None:
    app = ShardedVerlToolApp("MediaSearch-v0", workers=2, split="test", limits=LIMITS)
    with BackgroundServer(app, LIMITS) as server:
        assert httpx.get(server.url + "/health", timeout=30).json() == {"status": "healthy"}
        app.links[1].process.kill()
        app.links[1].process.wait()
        deadline = time.monotonic() + 10
        while app.links[1].gone is None and time.monotonic() < deadline:
            time.sleep(0.05)
        body = {"trajectory_ids": [ids_of(1, 1, "gone")[0]], "actions": [SEARCH]}
        reply = httpx.post(server.url + "/get_observation", json=body, timeout=30)
        assert reply.status_code == 503 and "worker 1 has exited" in reply.json()["error"]
        body = {"trajectory_ids": [ids_of(0, 1, "gone")[0]], "actions": [SEARCH]}
        assert httpx.post(server.url + "/get_observation", json=body, timeout=30).status_code == 200
        health = httpx.get(server.url + "/health", timeout=30)
        assert health.status_code == 503 and "worker 1" in health.json()["error"]
    assert all(link.process.poll() is not None for link in app.links), (
        "no worker outlives its server"
    )


def test_a_worker_that_cannot_build_its_env_fails_the_start() -> None:
    app = ShardedVerlToolApp(
        "MediaSearch-v0", workers=2, split="test", env_kwargs={"bogus": 1}, limits=LIMITS
    )
    with pytest.raises(RuntimeError, match="failed to start"):
        with BackgroundServer(app, LIMITS):
            pass
    reasons = [link.gone or "" for link in app.links]
    assert any("could not build its env" in r and "bogus" in r for r in reasons), reasons
    assert all(link.process.poll() is not None for link in app.links)


@pytest.mark.parametrize("chunk_bytes", [1, 7, 40, 1 << 18])
def test_an_answer_in_pieces_is_the_answer_in_one(chunk_bytes: int) -> None:
    import random

    from agentenv.integrations.serve_env.answer_body import ObservationChunks

    rng = random.Random(chunk_bytes)
    for n in range(7):
        texts = [json.dumps({"obs": "é" * rng.randrange(20), "reward": 0.5}) for _ in range(n)]
        dones, valids = [rng.random() < 0.5 for _ in texts], [True] * n
        pieces = ObservationChunks(
            [t.encode() for t in texts], dones, valids, chunk_bytes=chunk_bytes
        )
        body = b"".join(pieces)
        whole = {"observations": [json.loads(t) for t in texts], "dones": dones, "valids": valids}
        assert body == json.dumps(whole).encode() and pieces.length == len(body)
