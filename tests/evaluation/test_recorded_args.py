"""run.json and summary.json record an agent's arguments with secrets left out, and still agree."""

from __future__ import annotations

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
