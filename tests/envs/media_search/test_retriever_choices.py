"""MediaSearch passes check_env with every retriever choice, a served index included."""

from __future__ import annotations

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import agentenv  # noqa: F401
from agentenv.corpora.media.catalog import load_catalog
from agentenv.engine.actions import tool_call
from agentenv.retrieval import build_retriever


@pytest.mark.parametrize("retriever", ["bm25", "bm25-reference", "dense", "hybrid-hashed-svd"])
def test_check_env_with_each_backend(retriever: str) -> None:
    env = gym.make("MediaSearch-v0", retriever=retriever)
    check_env(env.unwrapped, skip_render_check=True)
    env.reset(seed=0)
    obs, *_ = env.step(tool_call("search", query="Inception Christopher Nolan", k=3))
    assert '"results"' in obs


def test_check_env_with_a_retrieval_server_and_when_it_is_down() -> None:
    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")
    from agentenv.retrieval.server import BackgroundServer

    catalog = load_catalog()
    ids, texts = catalog.documents()
    local = build_retriever("bm25", texts, ids, corpus_checksum=catalog.checksum)
    server = BackgroundServer(
        local, {"corpus": "media", "checksum": catalog.checksum}, port=0
    ).start()
    try:
        env = gym.make("MediaSearch-v0", retriever=server.url)
        check_env(env.unwrapped, skip_render_check=True)
        env.reset(seed=0)
        served, *_ = env.step(tool_call("search", query="Inception", k=5))
        in_process = gym.make("MediaSearch-v0", retriever=local)
        in_process.reset(seed=0)
        assert served == in_process.step(tool_call("search", query="Inception", k=5))[0]
    finally:
        server.stop()
    obs, *_ = env.step(tool_call("search", query="Inception", k=5))
    assert (
        obs.startswith("Error: search could not run") and "service it needs is unavailable" in obs
    ), obs[:400]
