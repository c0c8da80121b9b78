"""``serve-env --protocol openenv`` over loopback, driven by OpenEnv's own clients (``EnvClient``, ``GenericEnvClient``)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import gymnasium as gym
import pytest

pytest.importorskip("openenv")
httpx = pytest.importorskip("httpx")

from openenv.core.generic_client import GenericEnvClient  # noqa: E402

import agentenv  # noqa: E402, F401 - registers the ids
from agentenv.engine.actions import answer, tool_call  # noqa: E402
from agentenv.integrations.openenv import create_app  # noqa: E402
from agentenv.integrations.openenv.client import AgentEnvClient  # noqa: E402
from agentenv.integrations.openenv.models import TextAction  # noqa: E402
from agentenv.integrations.serve_env.limits import EnvServerLimits  # noqa: E402
from agentenv.integrations.serve_env.runner import BackgroundServer  # noqa: E402

SEARCH = tool_call("search", query="heat")
LIMITS = EnvServerLimits(max_live_envs=2, max_body_bytes=65536)


@pytest.fixture(scope="module")
def server() -> Iterator[BackgroundServer]:
    with BackgroundServer(
        create_app("MediaSearch-v0", split="test", limits=LIMITS), LIMITS, websockets=True
    ) as running:
        yield running


def test_openenv_client_plays_the_episode_the_env_plays(server: BackgroundServer) -> None:
    env = gym.make("MediaSearch-v0", split="test")
    prompt, info = env.reset(seed=4, options={"index": 2})
    gold = env.unwrapped.task.gold
    actions = [SEARCH, "no tags", answer(gold if isinstance(gold, str) else str(gold))]
    expected = [env.step(a) for a in actions]
    with AgentEnvClient(base_url=server.url).sync() as client:
        first = client.reset(seed=4, index=2, split="test")
        assert first.observation.text == prompt and first.observation.tools == info["tools"]
        assert first.observation.messages == info["messages"] and not first.done
        results = [client.step(TextAction(text=a)) for a in actions]
        state = client.state()
    for (obs, reward, terminated, truncated, step_info), result in zip(
        expected, results, strict=True
    ):
        assert (result.observation.text, result.reward, result.done) == (
            obs,
            reward,
            terminated or truncated,
        )
        assert result.observation.valid == ("parse_error" not in step_info)
    last = results[-1].observation
    assert (
        last.messages == expected[-1][4]["messages"]
        and last.reward_components == expected[-1][4]["reward_components"]
    )
    assert state.step_count == 3 and state.task_id == info["task_id"] and state.done


def test_generic_client_and_steps_outside_an_episode(server: BackgroundServer) -> None:
    with GenericEnvClient(base_url=server.url).sync() as client:
        before = client.step({"text": SEARCH})  # no reset yet: an error observation, not a crash
        assert (
            before.done
            and not before.observation["valid"]
            and "send reset first" in before.observation["text"]
        )
        client.reset(seed=0, index=0)
        assert (
            client.step({"text": "x" * 40000}).observation["valid"] is False
        )  # over the env's action cap
        with pytest.raises(RuntimeError, match="'index' must be a non-negative integer"):
            client.reset(index=-1)
        with pytest.raises(RuntimeError, match="unknown reset field 'indx'"):
            client.reset(seed=0, indx=2)  # misspelt: refused, not a seeded random task
        env = gym.make("MediaSearch-v0", split="test")
        prompt, info = env.reset(seed=4, options={"index": 2})
        row = {
            "env_id": "MediaSearch-v0",
            "split": "test",
            "task_index": 2,
            "seed": 4,
            "task_id": info["task_id"],
            "episode": 0,
            "env_kwargs": "{}",
            "index": 0,
        }  # a row as `agentenv prepare-verl` writes it
        assert client.reset(**row).observation["text"] == prompt
        with pytest.raises(RuntimeError, match="the row is for 'RareDiseaseDiagnosis-v0'"):
            client.reset(**{**row, "env_id": "RareDiseaseDiagnosis-v0"})


def test_the_session_cap_and_idle_websockets() -> None:
    from websockets.sync.client import connect

    limits = EnvServerLimits(max_live_envs=2, idle_timeout_s=0.5)
    with BackgroundServer(
        create_app("MediaSearch-v0", split="test", limits=limits), limits, websockets=True
    ) as server:
        holders = [AgentEnvClient(base_url=server.url).sync() for _ in range(2)]
        for holder in holders:
            holder.reset(seed=0)
        ws_url = server.url.replace("http://", "ws://") + "/ws"
        with connect(ws_url) as third:  # OpenEnv refuses a session past max_concurrent_envs at once
            assert '"CAPACITY_REACHED"' in third.recv(timeout=10)
        time.sleep(2.0)  # idle_timeout_s=0.5: the server has closed both silent sessions
        with AgentEnvClient(base_url=server.url).sync() as fresh:
            assert not fresh.reset(seed=0).done
        for holder in holders:
            with pytest.raises(Exception):  # noqa: B017 - closed by the server (the exception type is websockets')
                holder.step(TextAction(text=SEARCH))
            holder.close()


def test_a_client_that_never_finishes_cannot_keep_another_from_starting() -> None:
    """A walker (127.0.0.2) holds the cap's two sessions, steps one and leaves the other open;
    a new client (127.0.0.3) below its share gets a session: the walker's idlest is closed with
    1013 and the reason. The walker, now at its share, is refused a third as before."""
    import contextlib
    import json
    import socket

    from websockets.sync.client import connect

    limits = EnvServerLimits(max_live_envs=2, idle_timeout_s=60.0)
    with (
        BackgroundServer(
            create_app("MediaSearch-v0", split="test", limits=limits), limits, websockets=True
        ) as server,
        contextlib.ExitStack() as open_sockets,
    ):
        host, port = server.url.removeprefix("http://").split(":")
        ws_url = server.url.replace("http://", "ws://") + "/ws"

        def session(source: str) -> object:
            sock = socket.create_connection((host, int(port)), source_address=(source, 0))
            return open_sockets.enter_context(connect(ws_url, sock=sock))

        def ask(ws: object, kind: str, data: dict) -> dict:
            ws.send(json.dumps({"type": kind, "data": data}))  # type: ignore[attr-defined]
            return json.loads(ws.recv(timeout=10))  # type: ignore[attr-defined]

        walker = [session("127.0.0.2") for _ in range(2)]
        for ws in walker:
            assert ask(ws, "reset", {"seed": 0})["type"] == "observation"
        assert ask(walker[0], "step", {"text": SEARCH})["type"] == "observation"
        legit = session("127.0.0.3")
        assert ask(legit, "reset", {"seed": 1})["type"] == "observation"
        assert ask(legit, "step", {"text": SEARCH})["type"] == "observation"
        with pytest.raises(Exception) as closed:  # noqa: B017 - the exception type is websockets'
            ask(walker[1], "step", {"text": SEARCH})
        assert closed.value.rcvd.code == 1013 and "taken back" in closed.value.rcvd.reason
        assert ask(walker[0], "step", {"text": SEARCH})["type"] == "observation"  # still stepped
        third = session("127.0.0.2")  # at its share: refused at the cap at once, as before
        assert '"CAPACITY_REACHED"' in third.recv(timeout=10)  # type: ignore[attr-defined]


def test_http_errors_are_one_json_line(server: BackgroundServer) -> None:
    with httpx.Client(base_url=server.url, timeout=10) as client:
        assert client.get("/health").status_code == 200
        too_big = client.post("/step", content=b"x" * 70000)
        assert too_big.status_code == 413 and "at most 65536" in too_big.json()["detail"]
        bad_task = client.post("/reset", json={"index": 10**9})
        assert (
            bad_task.status_code == 422 and "cannot start an episode" in bad_task.json()["detail"]
        )
        assert client.post("/reset", json={"seed": 0, "index": 1}).json()["observation"]["text"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"seed": NaN}', "NaN is not a JSON number"),
        (b'{"seed": 1e999}', "'seed' must be a non-negative integer"),
        (b'{"seed": "0"}', "'seed' must be a non-negative integer"),
        (b'{"seed": true}', "'seed' must be a non-negative integer"),
        (b'{"self": 1}', "unknown reset field 'self'"),
        (b'{"\\ud800": 1}', "lone UTF-16 surrogate"),
        (b'{"split": "\\udfff"}', "lone UTF-16 surrogate"),
        (b"[1, 2]", "a JSON list, not an object"),
        (b'"seed"', "a JSON str, not an object"),
        (b"[" * 5000, "nested too deeply"),
        (b'{"episode_id": 5}', "'episode_id' must be a string"),
        (b'{"env_kwargs": [1]}', "'env_kwargs' must be a JSON object"),
    ],
)
def test_a_reset_body_outside_its_grammar_is_a_422_naming_why(
    server: BackgroundServer, body: bytes, message: str
) -> None:
    """Bodies OpenEnv's own model coerced ("0", true) or answered with a 500 (NaN, "self", a lone
    surrogate) are refused before it reads them; the server then serves the next reset as usual."""
    with httpx.Client(base_url=server.url, timeout=10) as client:
        answer_ = client.post("/reset", content=body, headers={"content-type": "application/json"})
        assert answer_.status_code == 422, answer_.text
        assert answer_.json()["detail"].startswith("reset: ") and message in answer_.text
        assert client.post("/reset", json={"seed": 0, "index": 1}).status_code == 200


def test_a_websocket_reset_with_a_field_named_self_is_an_unknown_field(
    server: BackgroundServer,
) -> None:
    """HTTP refused it; over WebSocket it reached reset as a second 'self' ("got multiple values")."""
    import json

    from websockets.sync.client import connect

    with connect(server.url.replace("http://", "ws://") + "/ws") as ws:
        ws.send(json.dumps({"type": "reset", "data": {"self": 1}}))
        reply = ws.recv(timeout=10)
    assert "unknown reset field 'self'" in reply and "multiple values" not in reply
