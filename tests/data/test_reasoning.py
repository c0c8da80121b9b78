"""Scripted reasoning lines and the grounding filter: deterministic, varied, tied to the plan, never a leak."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.data.filters import ungrounded_ids
from agentenv.data.oracle_with_reasoning import ReasoningOracle
from agentenv.data.reasoning import GenericReasoningWriter, writer_for_task
from agentenv.engine.parsing import Answer, ToolCalls, parse_action
from agentenv.envs.media_search.agents.reasoning import MediaReasoningWriter as ReasoningWriter
from agentenv.envs.media_search.agents.reasoning import describe_filter, step_purposes

LOOKUP_PLAN = (
    {"tool": "search", "arguments": {"query": "Psycho III", "k": 5}},
    {"tool": "get_title", "arguments": {"title_id": "tt0091799"}},
)
COMPARISON_PLAN = (
    {"tool": "search", "arguments": {"query": "Liam", "k": 5}},
    {"tool": "get_title", "arguments": {"title_id": "tt1"}},
    {"tool": "search", "arguments": {"query": "D.E.B.S.", "k": 5}},
    {"tool": "get_title", "arguments": {"title_id": "tt2"}},
)


@pytest.mark.parametrize(
    ("plan", "extract", "expected"),
    [
        (LOOKUP_PLAN, {"op": "field", "step": -1, "path": "directors.0"}, {1: "director"}),
        (
            LOOKUP_PLAN,
            {"op": "member", "step": -1, "path": "cast", "options": ["A", "B"]},
            {1: "cast list"},
        ),
        (
            COMPARISON_PLAN,
            {"op": "argmin", "steps": [1, 3], "field": "year", "return": "title"},
            {1: "release year", 3: "release year"},
        ),
        (LOOKUP_PLAN[:1], {"op": "only", "step": -1, "field": "title"}, {0: "title"}),
        ((), None, {}),
    ],
)
def test_step_purposes_follow_the_extract_rule(plan, extract, expected) -> None:
    assert step_purposes(plan, extract) == expected


def test_lines_are_fixed_by_the_generator_and_vary_across_seeds() -> None:
    extract = {"op": "argmin", "steps": [1, 3], "field": "year", "return": "title"}

    def lines(seed: int) -> list[str]:
        writer = ReasoningWriter(COMPARISON_PLAN, extract, np.random.default_rng(seed))
        out = [
            writer.tool_line(i, s["tool"], s["arguments"], None)
            for i, s in enumerate(COMPARISON_PLAN)
        ]
        return out + [writer.answer_line("Liam")]

    assert lines(3) == lines(3)
    assert len({tuple(lines(seed)) for seed in range(12)}) > 3
    first = lines(3)
    assert (
        "'Liam'" in first[0] and "'D.E.B.S.'" in first[2]
    )  # the second search is phrased as a follow-up
    assert "release year" in first[1] and "Liam" in first[4] and "earlier" in first[4]


def test_open_record_line_names_the_title_only_when_the_last_output_listed_it() -> None:
    writer = ReasoningWriter(
        LOOKUP_PLAN, {"op": "field", "step": -1, "path": "year"}, np.random.default_rng(0)
    )
    listed = {"results": [{"id": "tt0091799", "title": "Psycho III", "year": 1986}]}
    assert "Psycho III (1986)" in writer.tool_line(
        1, "get_title", {"title_id": "tt0091799"}, listed
    )
    other = {"results": [{"id": "tt9", "title": "Psycho", "year": 1960}]}
    line = writer.tool_line(1, "get_title", {"title_id": "tt0091799"}, other)
    assert "the film" in line and "Psycho" not in line


NO_PLAN = ("I can answer this now.", "I have enough to give my answer.", "Here is my final answer.")


def test_unknown_tools_and_planless_tasks_get_generic_lines() -> None:
    for writer in (
        ReasoningWriter(None, None, np.random.default_rng(0)),
        GenericReasoningWriter(np.random.default_rng(0)),
    ):
        assert "disease_search" in writer.tool_line(0, "disease_search", {"query": "x"}, None)
        assert writer.answer_line("OMIM:1") in NO_PLAN


def test_a_plan_is_narrated_only_once_a_tool_was_called() -> None:
    """Single turn: the question has a plan but no tools are offered, so the answer claims no plan."""
    extract = {"op": "field", "step": -1, "path": "directors.0"}
    assert (
        ReasoningWriter(LOOKUP_PLAN, extract, np.random.default_rng(0)).answer_line("X") in NO_PLAN
    )
    writer = ReasoningWriter(LOOKUP_PLAN, extract, np.random.default_rng(0))
    writer.turn_line(0, [("search", {"query": "Psycho III"})], None)
    assert "director" in writer.answer_line("X")


def test_parallel_calls_to_one_other_tool_share_a_line() -> None:
    writer = ReasoningWriter(None, None, np.random.default_rng(0))
    calls = [("ask_patient", {"hpo_id": f"HP:{i}"}) for i in range(3)] + [
        ("search", {"query": "x"})
    ]
    line = writer.turn_line(0, calls, None)
    assert line.count("ask_patient") == 1 and "3" in line and "'x'" in line
    generic = GenericReasoningWriter(np.random.default_rng(0)).turn_line(0, calls, None)
    assert (
        generic.count("ask_patient") == 1 and "'x'" not in generic
    )  # no catalog phrasing for search


def test_the_writer_comes_from_the_tasks_family() -> None:
    from agentenv.core import Task

    rng = np.random.default_rng(0)
    media = gym.make("MediaSearch-v0", split="validation").unwrapped
    media.reset(options={"index": 0})
    assert type(writer_for_task(media.task, rng)) is ReasoningWriter
    disease = Task(prompt="p", gold={"diagnosis": ["OMIM:1"]}, family="rare_disease")
    assert (
        type(writer_for_task(disease, rng)) is GenericReasoningWriter
    )  # rare disease names no writer


def test_describe_filter_reads_like_a_phrase() -> None:
    assert (
        describe_filter({"genre": "Sci-Fi", "cast": ["A", "B", "C"]})
        == "sci-fi films starring A, B and C"
    )
    assert describe_filter(
        {"year_min": 2000, "min_rating": 8, "sort_by": "year", "order": "asc"}
    ) == ("films from 2000 on, rated at least 8, sorted by year, lowest first")


def test_reasoning_oracle_takes_the_oracles_actions_and_scores_the_same() -> None:
    """Same calls, same answers, same rewards as the bare oracle; only a think block is added."""
    from agentenv.baselines.oracle import OracleAgent

    env = gym.make("MediaSearch-v0", split="validation")
    for index in range(12):
        rewards = []
        for agent in (OracleAgent(), ReasoningOracle()):
            obs, info = env.reset(options={"index": index})
            agent.reset(obs, info, task=env.unwrapped.task, rng=np.random.default_rng([1, index]))
            done, actions = False, []
            while not done:
                action = agent.act(obs, info)
                actions.append(parse_action(action))
                obs, reward, terminated, truncated, info = env.step(action)
                done = terminated or truncated
            rewards.append(reward)
            if isinstance(agent, ReasoningOracle):
                assert all(a.reasoning for a in actions)
                assert all(isinstance(a, (ToolCalls, Answer)) for a in actions)
        assert rewards[0] == rewards[1] == 1.0


def test_ungrounded_ids_accept_ids_shown_earlier() -> None:
    call = {"function": {"name": "get_title", "arguments": '{"title_id": "tt42"}'}}
    shown = [
        {"role": "system", "content": "e.g. tt42"},
        {"role": "user", "content": "Who directed it?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "search", "arguments": {}}}],
        },
        {"role": "tool", "content": '{"results": [{"id": "tt42"}]}'},
        {"role": "assistant", "content": "", "tool_calls": [call]},
    ]
    assert ungrounded_ids(shown) == []
    assert ungrounded_ids(shown[:3] + shown[4:]) == ["tt42"]  # the system prompt is not evidence
