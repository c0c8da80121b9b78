"""``serve-env --protocol verl-tool`` over loopback, against the protocol as verl-tool's repository documents it.

verl-tool does not install from the package registry, so its own client cannot run in CI; the
requests here are the ones its tool server's ``ActionRequest`` accepts and its agent loop sends
(``trajectory_ids``, ``actions``, ``finish``, ``is_last_step``, ``extra_fields``), and the answers
are checked against its ``AgentResponse`` (``observations``, ``dones``, ``valids``).
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import gymnasium as gym
import pytest

pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

import agentenv  # noqa: E402, F401 - registers the ids
from agentenv.engine.actions import answer, tool_call  # noqa: E402
from agentenv.integrations.serve_env.limits import EnvServerLimits  # noqa: E402
from agentenv.integrations.serve_env.runner import BackgroundServer  # noqa: E402
from agentenv.integrations.verl_tool import create_app  # noqa: E402

SEARCH = tool_call("search", query="heat")
LIMITS = EnvServerLimits(
    max_live_envs=4,
    max_actions_per_request=8,
    max_body_bytes=65536,
    max_action_chars=4096,
    header_timeout_s=0.3,
)


@pytest.fixture(scope="module")
def server() -> Iterator[BackgroundServer]:
    with BackgroundServer(
        create_app("MediaSearch-v0", split="test", env_kwargs={}, limits=LIMITS), LIMITS
    ) as running:
        yield running


@pytest.fixture()
def client(server: BackgroundServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=10) as c:
        yield c
    server.app.trajectories.close()  # every test starts with no live trajectory and no ended id
    server.app.trajectories.ended.clear()


def post(
    client: httpx.Client, ids: list[str], actions: list[str], **fields: list
) -> httpx.Response:
    return client.post(
        "/get_observation", json={"trajectory_ids": ids, "actions": actions, **fields}
    )


def test_one_trajectory_scores_what_the_env_scores(client: httpx.Client) -> None:
    env = gym.make("MediaSearch-v0", split="test")
    _, info = env.reset(seed=2, options={"index": 9})
    gold = env.unwrapped.task.gold
    oracle = answer(gold if isinstance(gold, str) else str(gold))
    expected = [env.step(a) for a in (SEARCH, "no tags here", oracle)]
    row = {"seed": 2, "index": 9, "split": "test", "return_messages": True}
    got = [
        post(client, ["t"], [a], finish=[False], is_last_step=[False], extra_fields=[row]).json()
        for a in (SEARCH, "no tags here", oracle)
    ]
    for (obs, reward, terminated, truncated, step_info), reply in zip(expected, got, strict=True):
        assert (
            reply["observations"][0]["obs"] == obs and reply["observations"][0]["reward"] == reward
        )
        assert reply["dones"] == [terminated or truncated]
        assert reply["valids"] == ["parse_error" not in step_info]
    last = got[-1]["observations"][0]
    assert (
        last["terminated"]
        and last["turns"] == 3
        and last["messages"] == expected[-1][4]["messages"]
    )
    assert last["reward_components"] == expected[-1][4]["reward_components"]


def test_a_batch_steps_each_trajectory_and_finish_closes(
    client: httpx.Client, server: BackgroundServer
) -> None:
    starts = [{"seed": 0, "index": 0}, {"seed": 1, "index": 1}]
    reply = post(client, ["a", "b"], [SEARCH, "garbage"], extra_fields=starts).json()
    assert reply["dones"] == [False, False] and reply["valids"] == [True, False]
    assert set(server.app.trajectories.live) == {"a", "b"}
    reply = post(
        client, ["a", "b"], ["", SEARCH], finish=[True, False], is_last_step=[False, True]
    ).json()
    assert (
        reply["observations"][0] == ""
        and reply["dones"] == [True, True]
        and reply["valids"] == [True, True]
    )
    assert reply["observations"][1]["truncated"]  # is_last_step ends it
    assert not server.app.trajectories.live
    late = post(client, ["a"], [SEARCH]).json()
    assert late["dones"] == [True] and late["valids"] == [False]
    assert "has ended: the client finished it" in late["observations"][0]


def test_at_the_cap_a_request_is_refused_whole(
    client: httpx.Client, server: BackgroundServer
) -> None:
    post(client, ["1", "2", "3"], [SEARCH] * 3).raise_for_status()
    before = server.app.trajectories.stats.steps
    refused = post(client, ["1", "4", "5"], [SEARCH] * 3)  # two new ids, room for one
    assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
    assert "limit of 4 live trajectories" in refused.json()["error"]
    assert server.app.trajectories.stats.steps == before  # nothing in it was stepped
    assert post(client, ["4"], [SEARCH]).status_code == 200


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (b"{not json", 400, "not valid UTF-8 JSON"),
        (b"[1]", 422, "body must be a JSON object"),
        (b'{"actions": ["x"]}', 422, "missing field 'trajectory_ids'"),
        (b'{"trajectory_ids": ["a", "a"], "actions": ["x", "y"]}', 422, "repeats an id"),
        (b'{"trajectory_ids": ["a"], "actions": ["x", "y"]}', 422, "'actions' has 2 items"),
        (b'{"trajectory_ids": ["a"], "actions": [7]}', 422, "'actions'[0] must be a string"),
        (
            b'{"trajectory_ids": ["a"], "actions": ["x"], "finish": ["yes"]}',
            422,
            "'finish'[0] must be true or false",
        ),
        (
            b'{"trajectory_ids": ["a"], "actions": ["x"], "extra_fields": [3]}',
            422,
            "'extra_fields'[0] must be an object",
        ),
        (
            b'{"trajectory_ids": ["a"], "actions": ["x"], "extra_fields": [{"seed": -4}]}',
            422,
            "'extra_fields'[0]: 'seed' must be a non-negative integer",
        ),
        (
            b'{"trajectory_ids": ["a"], "actions": ["x"], "extra_fields": [{"split": "nosuch"}]}',
            422,
            "'split' 'nosuch' is not a split",
        ),
        (
            json.dumps(
                {
                    "trajectory_ids": ["a"],
                    "actions": ["x"],
                    "extra_fields": [
                        {
                            "env_id": "RareDiseaseDiagnosis-v0",
                            "split": "test",
                            "task_index": 0,
                            "seed": 0,
                        }
                    ],
                }
            ).encode(),
            422,
            "the row is for 'RareDiseaseDiagnosis-v0'; this server serves 'MediaSearch-v0'",
        ),
        (
            json.dumps(
                {
                    "trajectory_ids": ["a"],
                    "actions": ["x"],
                    "extra_fields": [
                        {
                            "env_id": "MediaSearch-v0",
                            "split": "test",
                            "task_index": 0,
                            "seed": 0,
                            "task_id": "task-0",
                        }
                    ],
                }
            ).encode(),
            422,
            "the row says 'task-0': rewrite the rows",
        ),
        (
            json.dumps(
                {
                    "trajectory_ids": ["a"],
                    "actions": ["x"],
                    "extra_fields": [
                        {
                            "env_id": "MediaSearch-v0",
                            "split": "test",
                            "task_index": 0,
                            "seed": 0,
                            "env_kwargs": '{"k": 3}',
                        }
                    ],
                }
            ).encode(),
            422,
            "the row was written for env kwargs",
        ),
        (
            json.dumps({"trajectory_ids": ["a"], "actions": ["x" * 70000]}).encode(),
            413,
            "at most 65536",
        ),
        (b'{"trajectory_ids": ["a"], "actions": ["\\ud800"]}', 422, "unpaired surrogate"),
        pytest.param(b"[" * 20000 + b"]" * 20000, 400, "nests too deeply", id="deep"),
    ],
    ids=lambda value: value[:40].decode(errors="replace") if isinstance(value, bytes) else None,
)
def test_a_bad_request_is_one_json_error(
    client: httpx.Client, server: BackgroundServer, body: bytes, status: int, message: str
) -> None:
    reply = client.post("/get_observation", content=body)
    assert reply.status_code == status and message in reply.json()["error"]
    assert "Traceback" not in reply.text and not server.app.trajectories.live


def test_other_paths_methods_and_slow_clients(
    client: httpx.Client, server: BackgroundServer
) -> None:
    assert client.get("/health").json() == {
        "status": "healthy"
    }  # what verl-tool's router waits for
    assert client.get("/get_observation").status_code == 405
    assert client.post("/search", json={}).status_code == 404
    info = client.get("/info").json()
    assert (
        info["protocol"] == "verl-tool"
        and info["env_id"] == "MediaSearch-v0"
        and info["limits"]["max_live_envs"] == 4
    )
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as slow:
        slow.sendall(b"POST /get_observation HTTP/1.1\r\nHost: x\r\n")  # headers never finish
        answer_bytes = slow.recv(4096)
    assert answer_bytes == b"" or b"408" in answer_bytes.split(b"\r\n")[0]
    assert client.get("/info").json()["connections"]["header_timeouts"] >= 1


NASTY = [
    "\x00\x01\x1b[2J",
    "<tool_call>" * 500,
    "<answer>unclosed",
    '<tool_call>{"name": "search", "arguments": {"query": "\u202eheat\ufeff"}}</tool_call>',
    "{" * 4000,
    "\U0001f3ac" * 1000,
    '{"tool_calls": [{"name": "drop_table", "arguments": {}}]}',
    "<answer></answer>" * 100,
]


def test_agent_text_never_crashes_the_server(
    client: httpx.Client, server: BackgroundServer
) -> None:
    replies = []
    for first in (0, 4):  # max_live_envs=4 here: four trajectories at a time, then finished
        ids = [f"nasty-{i}" for i in range(first, first + 4)]
        reply = post(client, ids, NASTY[first : first + 4])
        assert reply.status_code == 200
        replies.append(reply.json())
        post(client, ids, [""] * 4, finish=[True] * 4).raise_for_status()
    valids = [v for body in replies for v in body["valids"]]
    assert len(valids) == len(NASTY) and not all(
        valids
    )  # the env explained what it expected instead
    assert server.app.trajectories.stats.step_errors == 0
    long_one = replies[0]["observations"][
        1
    ]  # over max_action_chars: not stepped, an error observation
    assert (
        "has 5500 characters; this server steps at most 4096" in long_one["obs"]
        and not replies[0]["dones"][1]
    )
    assert client.get("/health").status_code == 200


def test_idle_trajectories_are_evicted_without_further_requests() -> None:
    limits = EnvServerLimits(trajectory_idle_s=0.2)
    with (
        BackgroundServer(
            create_app("MediaSearch-v0", split="test", limits=limits), limits
        ) as idle_server,
        httpx.Client(base_url=idle_server.url, timeout=10) as c,
    ):
        post(c, ["left"], [SEARCH]).raise_for_status()  # then the client goes quiet
        time.sleep(1.0)
        assert (
            idle_server.app.trajectories.stats.evicted == 1
            and not idle_server.app.trajectories.live
        )
        late = post(c, ["left"], [SEARCH]).json()
        assert late["dones"] == [True] and "idle for more than 0.2 s" in late["observations"][0]
