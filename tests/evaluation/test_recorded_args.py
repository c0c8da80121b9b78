"""run.json and summary.json record an agent's arguments with secrets left out, and still agree."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentenv.evaluation.evaluate import identity
from agentenv.evaluation.recorded_args import REDACTED, recorded_arg
from agentenv.evaluation.report import summarize
from agentenv.evaluation.runner import RunConfig

ARGS = (
    ("base_url", "http://alice:hunter2@127.0.0.1:18777/v1"),
    ("hf_token", "hf_abc"),
    ("api_key", "sk-1"),
    ("max_tokens", "16"),
    ("model", "m"),
)


def test_a_url_password_and_secret_names_reach_neither_file() -> None:
    """A password in base_url was written to run.json and summary.json as given; hf_token was
    redacted from the board's label but not from the files."""
    config = RunConfig(env_id="MediaSearch-v0", agent="llm", agent_args=ARGS)
    recorded = identity(config, None)["agent_args"]
    assert recorded == {
        "base_url": "http://127.0.0.1:18777/v1",
        "hf_token": REDACTED,
        "api_key": REDACTED,
        "max_tokens": "16",
        "model": "m",
    }
    summary = summarize(config, [], 1.0, {})
    assert summary.agent_args == {k: str(v) for k, v in recorded.items()}
    assert "hunter2" not in summary.model_dump_json() and "hf_abc" not in summary.model_dump_json()


@given(
    st.text(
        alphabet="abcdefghijklmnopqrstuvwxyzABC0123456789._~-%!$&'()*+,;=", min_size=1, max_size=12
    ),
    st.text(alphabet="abcdefghijklmnop0123456789", min_size=1, max_size=12),
)
def test_no_password_survives_in_a_url(user: str, password: str) -> None:
    """Any user name a URL's user information may hold (RFC 3986: unreserved, sub-delims, %)."""
    url = f"https://{user}:{password}x9@host.example:8000/v1"
    assert f"{password}x9" not in str(recorded_arg("base_url", url))


@pytest.mark.parametrize("value", ["http://127.0.0.1:8000/v1", "plain", "a@b.c", 7, 0.5])
def test_values_without_credentials_are_kept_as_given(value: object) -> None:
    assert recorded_arg("base_url", value) == value


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("https://h/cb#access_token=abc&state=1", "https://h/cb#access_token=redacted&state=1"),
        (
            "https://b.s3/o?X-Amz-Signature=ff&X-Amz-Date=1",
            "https://b.s3/o?X-Amz-Signature=redacted&X-Amz-Date=1",
        ),
        ("https://a.blob/c?sv=1&sig=xyz", "https://a.blob/c?sv=1&sig=redacted"),
        ("//alice:pw@host/v1", "//host/v1"),
        ("alice:pw@10.0.0.1:8000/v1", "10.0.0.1:8000/v1"),
        ("llama3:8b@sha256:4f2a", "llama3:8b@sha256:4f2a"),
        ("Qwen/Qwen3-8B", "Qwen/Qwen3-8B"),
    ],
)
def test_credentials_in_fragments_signatures_and_schemeless_urls_are_cut(value, shown) -> None:
    assert recorded_arg("base_url", value) == shown


def test_an_env_option_holding_a_url_password_is_recorded_without_it() -> None:
    """`--env-arg retriever=http://alice:hunter2@host/` reached run.json, summary.json and the
    board's caption as given."""
    config = RunConfig(
        env_id="MediaSearch-v0",
        agent="oracle",
        env_kwargs=(("retriever", "http://alice:hunter2@127.0.0.1:18790/"),),
    )
    assert identity(config, None)["env_kwargs"] == {"retriever": "http://127.0.0.1:18790/"}
    assert summarize(config, [], 1.0, {}).env_kwargs == {"retriever": "http://127.0.0.1:18790/"}


class _Overloaded(BaseHTTPRequestHandler):
    """An endpoint that lists model ``m`` and answers every completion with HTTP 503."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self._send(200, b'{"data": [{"id": "m"}]}')

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self._send(503, b"overloaded")

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_failure_reason_quoting_the_endpoint_leaves_its_password_out(
    tmp_path, capsys: pytest.CaptureFixture
) -> None:
    """The llm agent's failure reasons quote its URL: the password went into every episode
    record, the summary's reasons and the board's refusal."""
    from agentenv.cli.main import main

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Overloaded)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://alice:hunter2@127.0.0.1:{server.server_address[1]}/v1"
        out = tmp_path / "run"
        argv = ["eval", "MediaSearch-v0", "--agent", "llm", "--episodes", "2", "--no-progress"]
        argv += ["--agent-args", f"base_url={url}", "model=m", "retries=0", "tool_format=hermes"]
        main([*argv, "--max-agent-failures", "0", "--out", str(out)])
        main(["leaderboard", str(out), "--out", str(tmp_path / "board"), "--no-plots"])
    finally:
        server.shutdown()
    written = "".join(p.read_text() for p in out.iterdir() if p.is_file())
    assert "HTTP 503" in written and "hunter2" not in written
    shown = capsys.readouterr()
    assert "HTTP 503" in shown.err and "hunter2" not in shown.out + shown.err


def test_the_endpoint_check_leaves_the_password_out_of_its_line(capsys) -> None:
    from agentenv.cli.main import main

    argv = ["eval", "MediaSearch-v0", "--agent", "llm", "--episodes", "1", "--no-progress"]
    argv += ["--agent-args", "base_url=http://alice:hunter2@127.0.0.1:9/v1", "model=m"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "does not answer" in err and "hunter2" not in err
