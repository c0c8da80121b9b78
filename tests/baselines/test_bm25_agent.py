"""The bm25 agent: between random and the oracle on MediaSearch, deterministic, honest about what it plays."""

from __future__ import annotations

import json
import subprocess
import sys

import gymnasium as gym
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.baselines.bm25_agent import BM25Agent, UnsupportedEnv
from agentenv.core import Task
from agentenv.envs.media_search.agents.bm25_strategy import question_field
from agentenv.evaluation.agents import make_agent
from agentenv.evaluation.runner import RunConfig, timed_run

EPISODES = 200


def accuracy(env_id: str, agent: str, **agent_args: str) -> tuple[float, list[dict]]:
    config = RunConfig(
        env_id, agent, split="validation", episodes=EPISODES, agent_args=tuple(agent_args.items())
    )
    records, _ = timed_run(config, progress=False)
    return sum(r["reward_components"]["accuracy"] for r in records) / len(records), records


@pytest.mark.parametrize("env_id", ["MediaSearch-v0", "MediaSearch-SingleTurn-v0"])
def test_bm25_is_between_random_and_the_oracle(env_id: str) -> None:
    bm25, records = accuracy(env_id, "bm25")
    random, _ = accuracy(env_id, "random")
    oracle, _ = accuracy(env_id, "oracle")
    assert random + 0.2 < bm25 < oracle, (random, bm25, oracle)
    assert accuracy(env_id, "bm25")[1] == records  # deterministic
    if (
        env_id == "MediaSearch-v0"
    ):  # find a person (and up to 4 runs of the words beside the name), then filter, or search
        # and open up to 5 hits; a comparison searches twice and opens 3 per option; answer
        assert max(r["tool_calls"] for r in records) <= (1 + 4) + 1 + 5 and all(
            r["terminated"] for r in records
        )
        assert max(r["turns"] for r in records) <= 4


def test_agent_args_arrive_as_strings() -> None:
    from agentenv.envs.rare_disease.agents.bm25_strategy import RareDiseaseBM25Options

    agent = make_agent("bm25", k="3", max_diseases="none")  # MediaSearch: hits opened per search
    assert agent.args.k == 3 and agent.args.family_options == {
        "rare_disease": RareDiseaseBM25Options(None)
    }
    with pytest.raises(ValueError, match="k must be >= 1"):
        make_agent("bm25", k="0")
    with pytest.raises(ValueError, match="max_diseases must be >= 1"):
        make_agent("bm25", max_diseases="0")
    with pytest.raises(
        ValueError, match=r"unknown argument 'kk'.*known: k, .*max_diseases \(rare_disease\)"
    ):
        make_agent("bm25", kk="3")


def test_a_family_strategy_declares_its_own_options() -> None:
    """An outside family adds a bm25 option by declaring ``options`` on its strategy; other families never see it."""
    from dataclasses import dataclass

    from agentenv.families import EnvSpec, Family, register_family, unregister_family

    @dataclass
    class SpyOptions:
        depth: int = 1

    built = []

    class Spy:
        name = "spy"
        options = SpyOptions

        def __init__(self, args) -> None:
            built.append(args)

        def reset(self, obs, info, *, task, rng) -> None:
            pass

    register_family(
        Family(
            name="spy_options", envs=(EnvSpec("SpyOptions-v0", "agentenv.core:ToolEnv"),), bm25=Spy
        )
    )
    try:
        agent = make_agent("bm25", depth="4")
        agent.reset("q", {}, task=Task(prompt="q", gold={"answer": "x"}, family="spy_options"))
        assert built[0].k == 5 and built[0].options == SpyOptions(depth=4)
        make_agent("bm25").reset(
            "q", {}, task=Task(prompt="q", gold={"answer": "x"}, family="spy_options")
        )
        assert built[1].options == SpyOptions(depth=1)  # not given: the strategy's defaults
    finally:
        unregister_family("spy_options")
    with pytest.raises(ValueError, match="unknown argument 'depth'"):
        make_agent("bm25", depth="4")


@pytest.mark.parametrize(
    ("question", "field"),
    [
        ("Who directed Heat?", "director"),
        ("Heat was directed by whom?", "director"),
        ("Name the screenwriter credited on Heat.", "writer"),
        ("What year did Heat come out?", "year"),
        ("How many minutes does Heat run?", "runtime"),
        ("Does Heat feature Al Pacino or Tom Hanks? Name the one in its cast.", "cast"),
        ("For how many films in the catalog is Michael Mann credited as writer?", "count"),
        (
            "Al Pacino and Robert De Niro share exactly one film in the catalog. Who directed it?",
            "director",
        ),
        ("Which film is older, Heat or Ronin?", "compare"),
        ("What is the longest 1995 crime feature film?", "superlative"),
        ("when was boyhood released (year)?", "year"),
        ("who made the godfather? the director i mean", "director"),
        ("what's the 1997 james cameron movie with kate winslet", "title"),
    ],
)
def test_question_field_reads_the_wording(question: str, field: str) -> None:
    assert question_field(question) == field


def test_unsupported_env_is_a_clear_error() -> None:
    info = {
        "tools": [{"function": {"name": "square"}}],
        "messages": [{"role": "user", "content": "Square 3."}],
    }
    media = Task(prompt="Square 3.", gold={"answer": "9"}, family="media_search")
    with pytest.raises(UnsupportedEnv, match="tools \\['square'\\]"):
        BM25Agent().reset("Square 3.", info, task=media)
    with pytest.raises(
        UnsupportedEnv,
        match="the bm25 agent cannot play this env: unknown task family 'custom'.*families with a bm25 strategy: ",
    ):
        BM25Agent().reset("Square 3.", info, task=Task(prompt="Square 3.", gold={"answer": "9"}))
    with pytest.raises(UnsupportedEnv, match="needs the task"):
        BM25Agent().reset("Square 3.", info)


def test_the_strategy_is_never_handed_the_task() -> None:
    """Only the family name is read from the task: the strategy, like a policy, gets no task."""
    seen = []

    class Spy:
        name = "spy"

        def __init__(self, args) -> None:
            seen.append(args.k)

        def reset(self, obs, info, *, task, rng) -> None:
            seen.append(task)

        def act(self, obs, info) -> str:
            return "<answer>x</answer>"

    from agentenv.families import EnvSpec, Family, register_family, unregister_family

    register_family(
        Family(name="spy_bm25", envs=(EnvSpec("SpyBM25-v0", "agentenv.core:ToolEnv"),), bm25=Spy)
    )
    try:
        agent = make_agent("bm25", k="2")
        task = Task(prompt="q", gold={"answer": "secret"}, family="spy_bm25")
        for _ in range(2):
            agent.reset("q", {}, task=task)
        assert agent.act("q", {}) == "<answer>x</answer>"
        assert seen == [2, None, None]  # built once per family, never given the task
    finally:
        unregister_family("spy_bm25")


def test_rare_disease_single_turn_answers_the_top_candidates() -> None:
    try:
        env = gym.make("RareDiseaseDiagnosis-SingleTurn-v0", split="validation")
    except Exception as exc:  # noqa: BLE001 - the rare-disease envs may be absent from this checkout
        pytest.skip(f"RareDiseaseDiagnosis-SingleTurn-v0 unavailable: {exc}")
    obs, info = env.reset(seed=0, options={"index": 0})
    agent = BM25Agent()
    agent.reset(obs, info, task=env.unwrapped.task)
    listed = [line.split()[1] for line in obs.splitlines() if line[:3] in ("1. ", "2. ", "3. ")]
    assert agent.act(obs, info) == "<answer>" + "\n".join(listed) + "</answer>"


def test_cli_smoke(tmp_path) -> None:
    out = tmp_path / "bm25"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "agentenv.cli.main",
            "eval",
            "MediaSearch-v0",
            "--agent",
            "bm25",
            "--agent-args",
            "k=3",
            "--split",
            "validation",
            "--episodes",
            "5",
            "--out",
            str(out),
            "--no-progress",
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    summary = json.loads((out / "summary.json").read_text())
    assert (
        summary["agent"] == "bm25"
        and summary["episodes"] == 5
        and summary["agent_args"] == {"k": "3"}
    )
