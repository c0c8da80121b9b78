"""A retrieval service that is down reaches the agent as "unavailable", never as its own fault."""

from __future__ import annotations

import socket

import gymnasium as gym
import pytest

import agentenv  # noqa: F401
from agentenv.engine.actions import tool_call
from agentenv.retrieval.client import RetrievalUnavailable


def _dead_url() -> str:
    """A loopback port that nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}?deadline_s=0.5"


def test_search_against_a_dead_server_says_the_service_is_unavailable() -> None:
    env = gym.make("MediaSearch-v0", retriever=_dead_url())
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(tool_call("search", query="Inception", k=3))
    assert "service it needs is unavailable" in obs and "not a problem with your request" in obs
    assert "narrower" not in obs and not terminated and reward == 0.0
    assert info["turn"] == 1


def test_single_turn_reset_names_the_url_and_the_fix() -> None:
    url = _dead_url()
    env = gym.make("MediaSearch-SingleTurn-v0", retriever=url)
    with pytest.raises(RetrievalUnavailable, match=r"agentenv serve-retrieval") as err:
        env.reset(seed=0)
    assert url.split("?")[0] in str(err.value)
