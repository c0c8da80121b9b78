"""The agent registry: shipped agents come from entry points, user agents from register_agent."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from agentenv.errors import UserInputError
from agentenv.evaluation.agents import (
    ENTRY_POINT_GROUP,
    AgentFailure,
    agent_names,
    make_agent,
    register_agent,
    unregister_agent,
)
from agentenv.evaluation.runner import RunConfig, timed_run


class Constant:
    """Answers the same text every turn; ``text`` arrives as an ``--agent-args`` string."""

    name = "constant"

    def __init__(self, text: str = "Heat") -> None:
        self.text = text

    def reset(self, obs: str, info: Mapping[str, Any], *, task: Any, rng: Any) -> None:
        pass

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        return f"<answer>{self.text}</answer>"


def test_the_shipped_agents_are_declared_as_entry_points() -> None:
    from importlib.metadata import entry_points

    declared = {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}
    assert {"random", "oracle", "bm25", "llm", "phenotype-ranker"} <= declared <= set(agent_names())


def test_agent_args_arrive_as_strings_and_are_converted() -> None:
    assert make_agent("random", answer_prob="0.5").args.answer_prob == 0.5
    assert make_agent("phenotype-ranker", k="7").args.k == 7
    with pytest.raises(ValueError, match="unknown argument 'kk'"):
        make_agent("bm25", kk="1")


def test_unknown_names_list_the_known_ones() -> None:
    with pytest.raises(
        UserInputError, match="unknown agent 'nope'; known agents: bm25, hf, llm, oracle"
    ):
        make_agent("nope")


def test_a_user_agent_runs_in_the_harness() -> None:
    register_agent("constant-test", Constant)
    try:
        assert register_agent("constant-test", Constant) is Constant  # same factory again: a no-op
        with pytest.raises(UserInputError, match="already registered"):
            register_agent("constant-test", lambda: Constant())
        with pytest.raises(UserInputError, match="'oracle' is already registered"):
            register_agent("oracle", Constant)
        config = RunConfig(
            "MediaSearch-v0",
            "constant-test",
            split="validation",
            episodes=3,
            agent_args=(("text", "Heat"),),
        )
        records, _ = timed_run(config, progress=False)
        assert [r["turns"] for r in records] == [1, 1, 1]
        assert "<answer>Heat</answer>" in records[0]["messages"][-1]["content"]
    finally:
        unregister_agent("constant-test")
    assert "constant-test" not in agent_names()


def test_agent_failure_keeps_its_reason() -> None:
    assert AgentFailure("HTTP 500").reason == "HTTP 500"
