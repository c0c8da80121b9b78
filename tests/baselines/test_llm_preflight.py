"""A dead or wrong LLM endpoint fails before the first episode, in seconds, in one line that names the URL
and the fix, against real local HTTP servers (none listening, errors, the wrong model, tools refused)."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from agentenv.cli.main import main

from .fake_openai import VLLM_TOOLS_OFF, FakeOpenAI, Reply, chat_reply


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _eval(base_url: str, out: Path, *extra: str, env_id: str = "MediaSearch-v0") -> int:
    return main(
        [
            "eval",
            env_id,
            "--agent",
            "llm",
            "--agent-args",
            f"base_url={base_url}",
            "model=qwen",
            *extra,
            "--episodes",
            "100",
            "--out",
            str(out),
            "--no-progress",
        ]
    )


def _one_line(capsys, *needles: str) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err
    return err


def test_nothing_listening_fails_in_seconds_before_any_episode(tmp_path: Path, capsys) -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    start = time.perf_counter()
    assert _eval(url, tmp_path / "run") == 2
    assert time.perf_counter() - start < 10
    _one_line(capsys, f"{url}/models", "does not answer", "base_url=")
    assert not (tmp_path / "run").exists()  # no run directory for a run that never started


@pytest.mark.parametrize(
    ("models", "needles"),
    [
        (Reply({"error": "boom"}, status=500), ("/v1/models does not answer", "HTTP 500")),
        (Reply({"error": "no key"}, status=401), ("HTTP 401", "api_key")),
        (Reply(b"<html>not an API</html>"), ("does not answer", "not JSON")),
        (["other-model", "third"], ("does not serve model 'qwen'", "other-model, third", "model=")),
    ],
)
def test_a_broken_or_wrong_endpoint_is_one_line(tmp_path: Path, capsys, models, needles) -> None:
    with FakeOpenAI(lambda body: chat_reply("<answer>x</answer>"), models=models) as server:
        assert _eval(server.url, tmp_path / "run") == 2
        assert server.requests == []  # no chat request: the run never started
    _one_line(capsys, *needles)


def test_an_endpoint_without_tool_calling_is_refused_when_the_env_has_tools(
    tmp_path: Path, capsys
) -> None:
    with FakeOpenAI(
        lambda body: (
            Reply({"error": {"message": VLLM_TOOLS_OFF}}, status=400)
            if body.get("tools")
            else chat_reply("<answer>x</answer>")
        ),
        models=["qwen"],
    ) as server:
        assert _eval(server.url, tmp_path / "run") == 2
        assert len(server.requests) == 1 and server.requests[0]["max_completion_tokens"] == 1
    _one_line(capsys, "refuses requests with tools", "tool_format=hermes")


def test_a_live_endpoint_passes_the_check_and_runs(tmp_path: Path) -> None:
    with FakeOpenAI(lambda body: chat_reply("<answer>Heat</answer>"), models=["qwen"]) as server:
        code = main(
            [
                "eval",
                "MediaSearch-SingleTurn-v0",
                "--agent",
                "llm",
                "--agent-args",
                f"base_url={server.url}",
                "model=qwen",
                "--episodes",
                "2",
                "--out",
                str(tmp_path / "run"),
                "--no-progress",
            ]
        )
        assert (
            code == 0 and len(server.requests) == 2
        )  # no tools in this env: no tool probe, two episodes
