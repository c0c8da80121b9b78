"""``serve-env --protocol verl-tool --workers 2 --fronts 2``: two front processes on one port, the one-process answers.

The server is the real command in a child process (a supervisor, two fronts, two workers) on
loopback. Every request goes on a new connection, so the kernel spreads them over both fronts
and a trajectory's steps arrive at either; the answers must be the one-process server's, byte
for byte, and both fronts must have carried requests.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

if not sys.platform.startswith("linux"):
    pytest.skip("--fronts shares a port with SO_REUSEPORT, Linux only", allow_module_level=True)

import agentenv  # noqa: E402, F401 - registers the ids
from agentenv.engine.actions import answer, tool_call  # noqa: E402
from agentenv.integrations.serve_env.limits import EnvServerLimits  # noqa: E402
from agentenv.integrations.serve_env.runner import BackgroundServer  # noqa: E402
from agentenv.integrations.serve_env.shard_wire import shard_of  # noqa: E402
from agentenv.integrations.verl_tool import create_app  # noqa: E402

LIMITS = EnvServerLimits(max_live_envs=16, max_actions_per_request=8, max_body_bytes=65536)
SEARCH = tool_call("search", query="heat")
CLI = "import sys; from agentenv.cli.main import main; sys.exit(main(sys.argv[1:]))"


class FrontsServer:
    """``agentenv serve-env ... --fronts 2`` in a child process, on a port it picks."""

    def __init__(self, *extra: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CLI, "serve-env", "MediaSearch-v0", "--protocol", "verl-tool"]
            + ["--split", "test", "--workers", "2", "--fronts", "2", "--port", "0"]
            + ["--max-live-envs", str(LIMITS.max_live_envs), *extra],
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stderr is not None
        line = self.proc.stderr.readline()
        self.log: list[str] = []
        """What the processes log after the first line (read as it comes: a full pipe would block them)."""
        threading.Thread(target=self.log.extend, args=(self.proc.stderr,), daemon=True).start()
        found = re.search(r"http://127\.0\.0\.1:(\d+), 2 front processes, 2 worker", line)
        assert found, line
        self.url = f"http://127.0.0.1:{found.group(1)}"
        deadline = time.monotonic() + 120
        while True:  # both fronts up: /health from each (new connections spread over them)
            try:
                fronts = {
                    httpx.get(self.url + "/info", timeout=30).json()["front"] for _ in range(8)
                }
                if fronts == {0, 1}:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline and self.proc.poll() is None, "no server"
            time.sleep(0.1)

    def children(self) -> list[int]:
        """The fronts' and workers' process ids."""
        path = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        return [int(pid) for pid in path.read_text().split()]

    def stop(self, sig: signal.Signals = signal.SIGINT) -> int:
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[BackgroundServer, FrontsServer]]:
    one_process = create_app("MediaSearch-v0", split="test", env_kwargs={}, limits=LIMITS)
    fronts = FrontsServer()
    try:
        with BackgroundServer(one_process, LIMITS) as one:
            yield one, fronts
    finally:
        fronts.stop()


def post(url: str, body: dict) -> tuple[int, bytes]:
    """One request on a connection of its own (``httpx.post`` opens one each time)."""
    reply = httpx.post(url + "/get_observation", json=body, timeout=30)
    return reply.status_code, reply.content


def ids_of(worker: int, count: int, prefix: str) -> list[str]:
    return [f"{prefix}-{i}" for i in range(200) if shard_of(f"{prefix}-{i}", 2) == worker][:count]


def test_trajectories_stepped_over_new_connections_get_the_one_process_answers(
    servers: tuple[BackgroundServer, FrontsServer],
) -> None:
    one, fronts = servers
    a, b = ids_of(0, 2, "spread"), ids_of(1, 2, "spread")
    tids = [a[0], b[0], a[1], b[1]]
    starts = [{"seed": i, "index": i, "return_messages": i == 3} for i in range(4)]
    start = {"trajectory_ids": tids, "actions": [SEARCH] * 4, "extra_fields": starts}
    assert post(one.url, start) == post(fronts.url, start)
    # One trajectory a request, each on a new connection (verl-tool's agent loop), many times:
    # started through one front, stepped through both.
    for turn in range(6):
        for position, tid in enumerate(tids):
            action = (
                SEARCH if (turn + position) % 3 else tool_call("get_title", title_id="tt0113277")
            )
            body = {"trajectory_ids": [tid], "actions": [action]}
            assert post(one.url, body) == post(fronts.url, body), (turn, tid)
    # Two workers' trajectories in one request, then answers and a finish.
    both = {"trajectory_ids": [a[0], b[0]], "actions": [SEARCH, "no tags here"]}
    assert post(one.url, both) == post(fronts.url, both)
    for body in (
        {"trajectory_ids": [a[1]], "actions": [answer("Heat")]},
        {"trajectory_ids": [b[1], a[0]], "actions": ["", SEARCH], "finish": [True, False]},
        {"trajectory_ids": [b[1]], "actions": [SEARCH]},  # finished through either front: an error
    ):
        assert post(one.url, body) == post(fronts.url, body)
    info = httpx.get(fronts.url + "/info", timeout=30).json()
    carried = [front["worker_messages"] for front in info["per_front"]]
    assert len(carried) == 2 and all(n > 0 for n in carried), info["per_front"]
    assert info["fronts"] == 2 and info["stats"]["started"] == 4
    finish = {"trajectory_ids": tids, "actions": [""] * 4, "finish": [True] * 4}
    assert post(one.url, finish) == post(fronts.url, finish)


def test_a_front_that_exits_leaves_the_other_serving_and_a_worker_that_exits_is_a_503() -> None:
    server = FrontsServer()
    try:
        tid = ids_of(0, 1, "dies")[0]
        body = {"trajectory_ids": [tid], "actions": [SEARCH], "extra_fields": [{"seed": 1}]}
        assert post(server.url, body)[0] == 200
        front = httpx.get(server.url + "/info", timeout=30).json()["pid"]
        os.kill(front, signal.SIGKILL)
        time.sleep(0.5)
        for _ in range(12):  # new connections: all to the front left, none hangs
            assert post(server.url, {"trajectory_ids": [tid], "actions": [SEARCH]})[0] == 200
        workers = [
            pid
            for pid in server.children()
            if b"shard_worker" in Path(f"/proc/{pid}/cmdline").read_bytes()
        ]
        os.kill(workers[0], signal.SIGKILL)
        time.sleep(0.5)
        answers = [
            post(server.url, {"trajectory_ids": [ids_of(w, 1, "after")[0]], "actions": [SEARCH]})
            for w in (0, 1)
        ]
        assert sorted(status for status, _ in answers) == [200, 503], answers
        assert b"has exited" in max(answers)[1]  # the 503's
        assert httpx.get(server.url + "/health", timeout=30).status_code == 503
        assert any(
            "front" in line and "exited" in line and "serve on" in line for line in server.log
        )
    finally:
        children = server.children()
        assert server.stop() == 0
    time.sleep(0.2)
    assert not [pid for pid in children if Path(f"/proc/{pid}").exists()], "a process outlived it"


@pytest.mark.parametrize(
    "sig", [signal.SIGINT, pytest.param(signal.SIGTERM, marks=pytest.mark.slow)]
)
def test_stopping_the_server_stops_every_process(sig: signal.Signals) -> None:
    server = FrontsServer()
    children = server.children()
    assert len(children) == 4  # two workers, two fronts
    assert server.stop(sig) == 0
    time.sleep(0.2)
    assert not [pid for pid in children if Path(f"/proc/{pid}").exists()], "a process outlived it"


def test_fronts_off_linux_is_one_line_naming_the_option(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentenv.integrations.serve_env import fronts

    monkeypatch.setattr(fronts.sys, "platform", "darwin")
    with pytest.raises(fronts.NoReusePort, match="--fronts needs SO_REUSEPORT"):
        fronts.shared_listeners("127.0.0.1", 0, 2)


def test_shared_listeners_share_one_port() -> None:
    from agentenv.integrations.serve_env.fronts import shared_listeners

    listeners = shared_listeners("127.0.0.1", 0, 3)
    try:
        assert len({sock.getsockname()[1] for sock in listeners}) == 1
    finally:
        for sock in listeners:
            sock.close()


def test_a_worker_that_cannot_build_its_env_stops_the_server() -> None:
    from agentenv.integrations.serve_env.fronts import serve_fronts, shared_listeners

    started = time.monotonic()
    code = serve_fronts(
        shared_listeners("127.0.0.1", 0, 2),
        env_id="MediaSearch-v0",
        workers=2,
        split="test",
        env_kwargs={"bogus": 1},
        limits=LIMITS,
        log_level="critical",
    )
    assert code == 1 and time.monotonic() - started < 60


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--fronts", "0"], "--fronts must be positive, got 0"),
        (["--fronts", "2"], "--fronts applies with --workers 2 or more"),
    ],
)
def test_bad_fronts_is_one_line_and_exit_2(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentenv.cli.main import main

    assert main(["serve-env", "MediaSearch-v0", "--protocol", "verl-tool", *flags]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_help_names_fronts_and_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    from agentenv.cli.main import main

    with pytest.raises(SystemExit):
        main(["serve-env", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--fronts FRONTS" in out and "SO_REUSEPORT" in out and "per front" in out
