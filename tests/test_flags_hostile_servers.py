"""``serve-env`` and ``serve-retrieval`` fed hostile flags: huge process counts, an empty host, a
corpus module that does not import; and ``serve-retrieval --port 0``'s banner names the real port.

A refusal is one line, exit 2, before any server starts: the servers' own ``serve`` functions are
replaced by ones that fail the test if called. The one test that serves runs in a child process
with a timeout and is always stopped.
"""

from __future__ import annotations

import importlib.util
import json
import re
import signal
import subprocess
import sys
import time
import urllib.request
from typing import Any, NoReturn

import pytest

from agentenv.cli.limit_flags import MAX_PROCESSES

from .control_bytes import run_cli

HUGE = "1000000000000000000"
VERL = ["serve-env", "MediaSearch-v0", "--protocol", "verl-tool"]


def _must_not_serve(*args: Any, **kwargs: Any) -> NoReturn:
    raise AssertionError("a refused command started a server")


@pytest.fixture(autouse=True)
def no_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any server start fails the test (refusals must come before one)."""
    import agentenv.integrations.serve_env.fronts as fronts
    import agentenv.integrations.serve_env.runner as runner
    import agentenv.retrieval.server as retrieval_server

    monkeypatch.setattr(retrieval_server, "serve", _must_not_serve)
    monkeypatch.setattr(runner, "serve", _must_not_serve)
    monkeypatch.setattr(fronts, "serve_fronts", _must_not_serve)
    monkeypatch.setattr(fronts, "shared_listeners", _must_not_serve)


REFUSED = [
    ([*VERL, "--workers", HUGE], f"--workers must be from 1 to {MAX_PROCESSES} processes"),
    ([*VERL, "--workers", str(MAX_PROCESSES + 1)], "--workers must be from 1 to"),
    ([*VERL, "--workers", "2", "--fronts", HUGE], f"--fronts must be from 1 to {MAX_PROCESSES}"),
    ([*VERL, "--workers", "2", "--fronts", "0"], "--fronts must be positive, got 0"),
    ([*VERL, "--host", ""], "argument --host: an empty host binds every interface"),
    ([*VERL, "--host", "  "], "argument --host: an empty host"),
    (["serve-env", "MediaSearch-v0", "--protocol", "openenv", "--host", ""], "--host"),
    (["serve-retrieval", "--corpus", "media", "--workers", HUGE], f"at most {MAX_PROCESSES}"),
    (["serve-retrieval", "--corpus", "media", "--workers", "0"], "at least 1, got '0'"),
    (["serve-retrieval", "--corpus", "media", "--host", ""], "argument --host: an empty host"),
    (["serve-retrieval", "--corpus", "nosuchmod:x"], "--corpus 'nosuchmod:x': no module"),
    (["serve-retrieval", "--corpus", "nosuch.deeper:x"], "no module 'nosuch'"),
]


@pytest.mark.parametrize(("argv", "message"), REFUSED, ids=[" ".join(a)[-45:] for a, _ in REFUSED])
def test_a_hostile_flag_is_one_line_and_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(argv, capsys)
    assert code == 2, err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith(("agentenv: error:", f"agentenv {argv[0]}: error:")), err
    assert "listening on" not in err


def test_fronts_past_the_open_file_limit_are_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each front and worker is a socket pair held by the supervisor: 200 x 200 needs 80,264 files."""
    import agentenv.integrations.serve_env.runner as runner
    import agentenv.retrieval.server as retrieval_server

    monkeypatch.setattr(runner, "require_env_server_extra", lambda: None)
    monkeypatch.setattr(retrieval_server, "raise_fd_limit", lambda needed: 1024)
    code, _, err = run_cli([*VERL, "--workers", "200", "--fronts", "200"], capsys)
    assert code == 2 and "--fronts 200 with --workers 200 needs 80,264 open files" in err, err
    assert "1,024" in err and len(err.strip().splitlines()) == 1


@pytest.mark.skipif(
    importlib.util.find_spec("uvicorn") is None or importlib.util.find_spec("starlette") is None,
    reason="serving needs the server extra",
)
def test_serve_retrieval_port_0_names_the_port_it_listens_on() -> None:
    code = "import sys; from agentenv.cli.main import main; sys.exit(main(sys.argv[1:]))"
    argv = [sys.executable, "-c", code, "serve-retrieval", "--corpus", "media", "--port", "0"]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()  # the index is cached: seconds at most
        found = re.search(r"listening on http://127\.0\.0\.1:(\d+)$", line.strip())
        assert found and int(found.group(1)) != 0, line
        url = f"http://127.0.0.1:{found.group(1)}/info"
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url, timeout=5) as answer:
                    assert json.loads(answer.read())["corpus"] == "media"
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "no server there"
                time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
