"""MediaSearch end to end: oracle accuracy, random robustness, fuzzing and leakage."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentenv  # noqa: F401
from agentenv.engine.actions import answer, tool_call
from agentenv.evaluation.runner import RunConfig, timed_run


@pytest.fixture(scope="module")
def env() -> gym.Env:
    return gym.make("MediaSearch-v0")


def test_oracle_solves_the_test_split() -> None:
    records, _ = timed_run(
        RunConfig("MediaSearch-v0", "oracle", split="test", episodes=1000), progress=False
    )
    accuracy = np.mean([r["reward_components"]["accuracy"] for r in records])
    assert len({r["task_id"] for r in records}) == 1000
    assert accuracy >= 0.99, [r["gold"] for r in records if not r["reward_components"]["accuracy"]][
        :5
    ]


def test_random_agent_runs_1000_episodes() -> None:
    records, _ = timed_run(
        RunConfig("MediaSearch-v0", "random", split="validation", episodes=1000), progress=False
    )
    assert len(records) == 1000
    assert sum(r["reward_components"]["invalid_actions"] for r in records) > 500
    assert all(r["terminated"] or r["truncated"] for r in records)


SPECIAL_ACTIONS = [
    '<tool_call>{"name": "search", "arguments": {"query": "", "k": 0}}</tool_call>',
    '<tool_call>{"name": "get_title", "arguments": {"title_id": null}}</tool_call>',
    '<tool_call>{"name": "filter_titles", "arguments": {"year_min": 2020, "year_max": 1900}}</tool_call>',
    '{"tool_calls": [{"function": {"name": "find_person", "arguments": "{\\"name\\": 3}"}}]}',
    "<answer>" + "x" * 5000 + "</answer>",
]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    actions=st.lists(
        st.text(max_size=300) | st.sampled_from(SPECIAL_ACTIONS), min_size=1, max_size=10
    )
)
def test_step_never_raises_on_any_text(env: gym.Env, actions: list[str]) -> None:
    env.reset(seed=0)
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        assert isinstance(obs, str) and isinstance(reward, float)
        if terminated or truncated:
            env.reset(seed=1)


ADVERSARIAL_ARGUMENTS = [
    ("search", {"query": "{task_id}", "k": 20}),
    ("search", {"query": "gold answer __class__ __globals__", "k": 5}),
    ("get_title", {"title_id": "{task_id}"}),
    ("get_title", {"title_id": "../../etc/passwd"}),
    ("find_person", {"name": "{task_id}"}),
    ("find_person", {"name": "answer"}),
    ("filter_titles", {"director": "{task_id}", "limit": 25}),
]


def test_tools_reveal_nothing_about_the_task(env: gym.Env) -> None:
    """Tool output is a function of the arguments alone: the same call in two episodes with
    different tasks returns the same text (the task id, where the agent typed it, masked)."""
    outputs: dict[int, list[str]] = {}
    for index in (0, 1):
        _, info = env.reset(options={"index": index})
        task_id = info["task_id"]
        outputs[index] = []
        for name, args in ADVERSARIAL_ARGUMENTS:
            typed_id = any("{task_id}" in str(v) for v in args.values())
            concrete = {
                k: (v.replace("{task_id}", task_id) if isinstance(v, str) else v)
                for k, v in args.items()
            }
            obs, _, terminated, truncated, _ = env.step(tool_call(name, **concrete))
            if not typed_id:
                assert task_id not in obs
            outputs[index].append(obs.replace(task_id, "<id>"))
            if terminated or truncated:
                env.reset(options={"index": index})
    assert outputs[0] == outputs[1]


def test_errors_do_not_echo_the_gold(env: gym.Env) -> None:
    env.reset(options={"index": 3})
    gold = env.unwrapped.task.gold["answer"]
    for action in ["<answer>", tool_call("nope", gold=True), tool_call("search", query=1)]:
        obs, _, _, _, info = env.step(action)
        assert gold not in obs and "gold" not in info


def test_single_turn_prompt_has_passages_and_no_tools() -> None:
    env = gym.make("MediaSearch-SingleTurn-v0")
    obs, info = env.reset(seed=0)
    assert obs.startswith("Passages:\n[1] ") and "Question: " in obs
    assert info["tools"] == []
    _, _, terminated, truncated, info = env.step(tool_call("search", query="x"))
    assert info["parse_error"].startswith("unknown tool")
    assert terminated and not truncated
    assert (
        info["reward_components"]["accuracy"] == 0.0 and info["reward_components"]["format"] == 0.0
    )


def test_user_tasks_from_options_and_file(tmp_path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(
        json.dumps({"question": "Who directed Inception?", "answer": "Christopher Nolan"}) + "\n"
    )
    env = gym.make("MediaSearch-v0", tasks=str(path))
    obs, info = env.reset(seed=0)
    assert obs == "Who directed Inception?" and info["split"] == "custom"
    assert env.step(answer("christopher nolan"))[1] == 1.0
    path.write_text('{"question": "Who?"}\n')
    with pytest.raises(ValueError, match=r"q\.jsonl:1: missing field 'answer'"):
        gym.make("MediaSearch-v0", tasks=str(path))


def test_a_retriever_of_the_wrong_type_is_a_type_error() -> None:
    """The same rule (and exception type) as RareDiseaseDiagnosis: agentenv.retrieval.env_argument."""
    with pytest.raises(TypeError, match="retriever must be a name, a URL or a Retriever, not int"):
        gym.make("MediaSearch-v0", retriever=3)


def test_tool_signatures_spell_out_allowed_values_and_defaults() -> None:
    """``tools_in_prompt=True`` (plain-text agents) shows what may be sent, Literal values included."""
    env = gym.make("MediaSearch-v0", tools_in_prompt=True)
    system = env.reset(seed=0)[1]["messages"][0]["content"]
    assert 'sort_by: "rating" | "year" | "runtime" | "title" = "rating"' in system
    assert 'order: "desc" | "asc" = "desc"' in system
    assert "search(query: str, k: int = 5)" in system and "cast: list[str] = []" in system
    assert "Literal" not in system
