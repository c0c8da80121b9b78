"""``agentenv eval --ray auto`` against a head node started with ``ray start --head`` on loopback, then stopped."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from agentenv.cli.main import main  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def ray_command() -> str:
    here = Path(sys.executable).parent / "ray"
    found = str(here) if here.exists() else shutil.which("ray")
    if found is None:
        pytest.skip("the ray command is not installed")
    return found


def test_eval_on_a_head_node_started_on_loopback(tmp_path: Path, capsys) -> None:
    if (
        ray.is_initialized()
    ):  # `ray stop` below stops every Ray process here: leave none of ours running
        ray.shutdown()
    port = free_port()
    # The head and this client agree on token auth with a token of their own, whatever ~/.ray holds:
    # `ray start` turns auth on when ~/.ray/auth_token exists, and a fresh machine has none.
    env = {
        **os.environ,
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": secrets.token_hex(32),
    }
    args = [
        "eval",
        "MediaSearch-v0",
        "--agent",
        "oracle",
        "--split",
        "validation",
        "--episodes",
        "12",
        "--seed",
        "7",
        "--no-progress",
    ]
    try:
        subprocess.run(
            [
                ray_command(),
                "start",
                "--head",
                "--node-ip-address=127.0.0.1",
                f"--port={port}",
                "--num-cpus=2",
                "--include-dashboard=false",
                "--disable-usage-stats",
            ],
            env=env,
            check=True,
            capture_output=True,
            timeout=120,
        )
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "agentenv.cli.main",
                *args,
                "--workers",
                "2",
                "--ray",
                "auto",
                "--out",
                str(tmp_path / "ray"),
            ],
            env={**env, "RAY_ADDRESS": f"127.0.0.1:{port}"},
            capture_output=True,
            text=True,
            timeout=240,
        )
    finally:
        subprocess.run([ray_command(), "stop"], env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert main([*args, "--workers", "1", "--out", str(tmp_path / "local")]) == 0
    ray_lines = (tmp_path / "ray" / "episodes.jsonl").read_text(encoding="utf-8")
    assert ray_lines == (tmp_path / "local" / "episodes.jsonl").read_text(encoding="utf-8")
    summary = json.loads((tmp_path / "ray" / "summary.json").read_text(encoding="utf-8"))
    assert (summary["backend"], summary["workers"], summary["distributed"]["address"]) == (
        "ray",
        2,
        "auto",
    )
