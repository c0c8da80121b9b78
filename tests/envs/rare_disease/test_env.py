"""RareDiseaseDiagnosis end to end: checker, determinism, oracle, baselines, kwargs and robustness."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentenv.baselines.random_agent import RandomAgent
from agentenv.engine.actions import answer, tool_call
from agentenv.envs.rare_disease.env import RareDiseaseEnv
from agentenv.envs.rare_disease.patients.simulated import patients_fingerprint
from agentenv.envs.rare_disease.tasks.patient_tasks import _SHARED_SETS
from agentenv.evaluation.runner import RunConfig, timed_run

IDS = ["RareDiseaseDiagnosis-v0", "RareDiseaseDiagnosis-SingleTurn-v0"]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"presentation": "both", "ranker_tool": False},
        {"mode": "single_turn", "presentation": "text", "k": 1},
    ],
)
def test_check_env_with_other_kwargs(kwargs: dict) -> None:
    env = gym.make("RareDiseaseDiagnosis-v0", **kwargs)
    check_env(env.unwrapped, skip_render_check=True)


def _rollout(env_id: str, seed: int) -> list:
    env = gym.make(env_id)
    trace = []
    for episode in range(4):
        obs, info = env.reset(seed=seed + episode)
        agent = RandomAgent()
        agent.reset(obs, info, task=env.unwrapped.task, rng=np.random.default_rng([seed, episode]))
        trace.append((obs, info))
        done = False
        while not done:
            step = env.step(agent.act(obs, info))
            obs, info, done = step[0], step[4], step[2] or step[3]
            trace.append(step)
    return trace


@pytest.mark.parametrize("env_id", IDS)
def test_same_seed_same_rollout(env_id: str) -> None:
    assert _rollout(env_id, 5) == _rollout(env_id, 5)
    assert _rollout(env_id, 5) != _rollout(env_id, 6)


def test_tasks_are_built_lazily_and_patients_are_deterministic() -> None:
    _SHARED_SETS.clear()  # as the process's first env of the split (envs share a split's tasks)
    env = RareDiseaseEnv(split="validation")
    assert len(env.tasks) == 815 and not env.tasks._cache
    first = env.tasks[3]
    assert len(env.tasks._cache) == 1
    _SHARED_SETS.clear()  # built again from nothing, as in another process
    again = RareDiseaseEnv(split="validation").tasks
    assert again is not env.tasks
    assert first.case == again[3].case and first.id == again[3].id


def test_oracle_scores_one_through_the_real_tools() -> None:
    records, _ = timed_run(
        RunConfig("RareDiseaseDiagnosis-v0", "oracle", episodes=200), progress=False
    )
    components = [r["reward_components"] for r in records]
    assert np.mean([r["reward"] for r in records]) == 1.0
    assert sum(c["invalid_actions"] + c["tool_errors"] for c in components) == 0
    assert np.mean([c["questions_asked"] for c in components]) > 2
    assert all(c["n_predictions"] == 1 for c in components)


def test_single_turn_oracle_and_ranker_baseline() -> None:
    oracle, _ = timed_run(RunConfig(IDS[1], "oracle", episodes=50), progress=False)
    ranker, _ = timed_run(RunConfig(IDS[1], "phenotype-ranker", episodes=200), progress=False)
    assert np.mean([r["reward"] for r in oracle]) == 1.0
    accuracy = np.mean([r["reward_components"]["accuracy"] for r in ranker])
    assert 0.35 <= accuracy <= 0.65, accuracy
    assert all(r["reward_components"]["n_predictions"] == 3 for r in ranker)


def test_ranker_agent_gives_the_same_answer_with_and_without_the_tool() -> None:
    with_tool = RunConfig(IDS[0], "phenotype-ranker", episodes=30)
    without = RunConfig(
        IDS[0], "phenotype-ranker", episodes=30, env_kwargs=(("ranker_tool", False),)
    )
    a, _ = timed_run(with_tool, progress=False)
    b, _ = timed_run(without, progress=False)
    assert [r["reward_components"]["accuracy"] for r in a] == [
        r["reward_components"]["accuracy"] for r in b
    ]
    assert all(r["tool_calls"] == 1 for r in a) and all(r["tool_calls"] == 0 for r in b)


def test_metadata_checksums_and_prompt(multi_env: gym.Env, single_env: gym.Env) -> None:
    env = multi_env.unwrapped
    assert (
        env.metadata["hpo_release"] == "2025-01-16"
        and "Human Phenotype Ontology" in env.metadata["hpo_citation"]
    )
    assert env.corpus_checksums == {
        "hpo": env.kb.checksum,
        "patients": patients_fingerprint(env.kb, env.sampler_params),
    }
    obs, info = multi_env.reset(seed=0)
    assert "up to 3 diseases" in obs and "scores 0" in obs and "Candidates" not in obs
    assert "ask_patient" in info["messages"][0]["content"]
    obs, info = single_env.reset(seed=0)
    assert "Candidates" in obs and obs.count("\n1. OMIM:") == 1 and not info["tools"]
    lenient = gym.make(IDS[1], reward="lenient").reset(seed=0)[0]
    assert "scores 0" not in lenient


def test_truncation_and_malformed_answers(multi_env: gym.Env) -> None:
    multi_env.reset(seed=1)
    for _ in range(10):
        _, reward, terminated, truncated, info = multi_env.step(
            tool_call("lookup_phenotype", text="seizure")
        )
    assert truncated and not terminated and reward == 0.0
    assert (
        info["reward_components"]["n_predictions"] == 0.0
        and info["reward_components"]["format"] == 0.0
    )
    multi_env.reset(seed=1)
    _, reward, terminated, _, info = multi_env.step(answer("???\n1. \n<b>not a disease</b>"))
    assert terminated and reward == 0.0
    assert (
        info["reward_components"]["unresolved"] == 3.0
        and info["reward_components"]["n_predictions"] == 3.0
    )
    assert (
        info["answer_feedback"]
        == "unreadable answer: entry 1: '???' is not a disease name or id (and 2 more)"
    )


def test_k_sets_the_limit_and_the_components() -> None:
    env = gym.make(IDS[1], k=1)
    obs, _ = env.reset(seed=0)
    gold = env.unwrapped.task.gold["diagnosis"][0]
    assert "up to 1 diseases" in obs
    components = env.step(answer([gold, "OMIM:154700"]))[4]["reward_components"]
    assert "hit@1" in components and "hit@3" not in components
    assert components["over_limit"] == 1.0 and components["accuracy"] == 1.0


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"mode": "chat"}, "mode"),
        ({"universe": "orpha"}, "universe"),
        ({"k": 0}, "k"),
        ({"k": 2.5}, "k"),
        ({"presentation": "image"}, "presentation"),
        ({"candidates": 100}, "candidates"),
        ({"sampler": "dirty"}, "sampler"),
        ({"sampler": "multi_turn", "mode": "single_turn"}, "hidden_fraction"),
        ({"split": "dev"}, "split"),
        (
            {
                "tasks": [{"phenotypes": ["HP:0001166"], "diagnosis": ["OMIM:154700"]}],
                "sampler": "clean",
            },
            "sampler",
        ),
    ],
)
def test_bad_kwargs_fail_early_naming_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        RareDiseaseEnv(**kwargs)


def test_a_retriever_of_the_wrong_type_is_a_type_error() -> None:
    """The same rule (and exception type) as MediaSearch: agentenv.retrieval.env_argument."""
    with pytest.raises(TypeError, match="retriever must be a name, a URL or a Retriever, not int"):
        RareDiseaseEnv(retriever=3)


def test_sampler_presets_change_the_patients() -> None:
    clean = RareDiseaseEnv(mode="single_turn", sampler="clean").tasks[0].case
    calibrated = RareDiseaseEnv(mode="single_turn").tasks[0].case
    assert clean.disease_id == calibrated.disease_id and clean != calibrated


def test_reset_accepts_a_task_dict_and_rejects_foreign_tasks(multi_env: gym.Env) -> None:
    task = {"phenotypes": ["HP:0001166", "HP:0001083"], "diagnosis": ["OMIM:154700", "OMIM:609192"]}
    obs, info = multi_env.reset(options={"task": task})
    assert "Arachnodactyly" in obs and info["split"] == "custom"
    reply = multi_env.step(tool_call("ask_patient", hpo_id="HP:0001250"))[0]
    assert '"not sure"' in reply, "imported patients are not closed-world"
    components = multi_env.step(answer("Loeys-Dietz syndrome 1"))[4]["reward_components"]
    assert components["hit@1"] == 1.0, "any accepted diagnosis counts"
    from agentenv.core import Task

    with pytest.raises(ValueError, match="rare-disease Task"):
        multi_env.reset(options={"task": Task(prompt="x", gold={})})


SPECIAL = [
    '<tool_call>{"name": "rank_by_phenotypes", "arguments": {"hpo_ids": []}}</tool_call>',
    '<tool_call>{"name": "get_disease", "arguments": {"disease_id": null}}</tool_call>',
    '<tool_call>{"name": "ask_patient", "arguments": {"hpo_id": "HP:0001250", "why": 1}}</tool_call>',
    '<tool_call>{"name": "search_diseases", "arguments": {"query": "%%%", "k": 20}}</tool_call>',
    "<answer>" + "OMIM:154700\n" * 2000 + "</answer>",
]


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(actions=st.lists(st.text(max_size=200) | st.sampled_from(SPECIAL), min_size=1, max_size=6))
def test_step_never_raises_on_any_text(multi_env: gym.Env, actions: list[str]) -> None:
    multi_env.reset(seed=0)
    for action in actions:
        obs, reward, terminated, truncated, _ = multi_env.step(action)
        assert isinstance(obs, str) and isinstance(reward, float)
        if terminated or truncated:
            multi_env.reset(seed=1)


def test_omim_plus_orpha_universe_accepts_orpha_ids() -> None:
    env = gym.make(IDS[1], universe="omim+orpha")
    obs, _ = env.reset(seed=0)
    assert "ORPHA ids" in obs and env.unwrapped.kb.universe == "omim+orpha"
    gold = env.unwrapped.task.gold["diagnosis"][0]
    components = env.step(answer(["ORPHA:558", gold]))[4]["reward_components"]
    assert components["unresolved"] == 0.0 and components["reciprocal_rank"] == 0.5
