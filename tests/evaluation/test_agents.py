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
    assert {"random", "oracle", "bm25", "llm"} <= declared <= set(agent_names())


def test_setup_cfg_declares_only_generic_agents() -> None:
    """An agent that serves one family lives in its record (``Family.agents``), not in setup.cfg."""
    import configparser
    from pathlib import Path

    config = configparser.ConfigParser()
    config.read(Path(__file__).resolve().parents[2] / "setup.cfg")
    targets = config["options.entry_points"][ENTRY_POINT_GROUP].split()
    assert not [t for t in targets if t.startswith("agentenv.envs.")], targets
    assert {"phenotype-ranker", "oracle-question-spelling"} <= set(agent_names())


def test_a_family_declares_its_own_agent_with_no_line_elsewhere() -> None:
    from agentenv.families import EnvSpec, Family, register_family, unregister_family

    register_family(
        Family(
            name="agents_toy",
            envs=(EnvSpec("AgentsToy-v0", "agentenv.core:ToolEnv"),),
            agents={"constant-toy": f"{__name__}:Constant"},
        )
    )
    try:
        assert "constant-toy" in agent_names()
        assert make_agent("constant-toy", text="Cold").act("", {}) == "<answer>Cold</answer>"
        with pytest.raises(UserInputError, match="already registered"):
            register_agent("constant-toy", Constant)
    finally:
        unregister_family("agents_toy")


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
