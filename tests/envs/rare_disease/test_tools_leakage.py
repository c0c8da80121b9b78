"""No tool reveals the patient's disease, the split or hidden findings; ask_patient is truthful.

The core property: every tool but ask_patient is a function of its arguments
(and the read-only KB) alone. The same adversarial calls — the task id, the
other case's disease id, both patients' hidden term ids, words like
'diagnosis' — give byte-identical output in episodes with different patients
and in envs of different splits.
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.engine.actions import answer, tool_call
from agentenv.envs.rare_disease.patients.simulated import Patient, ask

WORDS = [
    "diagnosis",
    "answer",
    "gold",
    "hidden",
    "patient",
    "split test",
    "__class__",
    "../../etc/passwd",
]


def _patients_with_hidden(env: gym.Env, n: int = 2) -> list[int]:
    found = []
    for index in range(len(env.unwrapped.tasks)):
        if env.unwrapped.tasks[index].case.hidden:
            found.append(index)
        if len(found) == n:
            return found
    raise AssertionError("no patients with hidden findings")


def _calls(
    task_ids: list[str], diseases: list[str], hidden: list[str]
) -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = []
    for text in [*task_ids, *diseases, *WORDS]:
        calls += [
            ("search_diseases", {"query": text, "k": 20}),
            ("get_disease", {"disease_id": text}),
            ("lookup_phenotype", {"text": text, "limit": 25}),
            ("phenotype_relatives", {"hpo_id": text[:20]}),
            ("rank_by_phenotypes", {"hpo_ids": [text[:20]], "k": 20}),
        ]
    for term in hidden:
        calls += [
            ("lookup_phenotype", {"text": term}),
            ("phenotype_relatives", {"hpo_id": term}),
            ("rank_by_phenotypes", {"hpo_ids": [term], "k": 20}),
            ("search_diseases", {"query": term}),
        ]
    calls.append(("rank_by_phenotypes", {"hpo_ids": hidden, "k": 20}))
    return calls


def _run(env: gym.Env, index: int, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    env.reset(seed=0, options={"index": index})
    outputs = []
    for name, args in calls:
        if env.unwrapped._episode.turn >= env.unwrapped.max_turns - 1:
            env.reset(seed=0, options={"index": index})
        obs, _, terminated, truncated, info = env.step(tool_call(name, **args))
        assert not (terminated or truncated) and "gold" not in info
        outputs.append(obs)
    return outputs


@pytest.fixture(scope="module")
def setting(multi_env: gym.Env) -> dict[str, Any]:
    a, b = _patients_with_hidden(multi_env)
    tasks = [multi_env.unwrapped.tasks[i] for i in (a, b)]
    patients: list[Patient] = [t.case for t in tasks]
    assert patients[0].disease_id != patients[1].disease_id
    calls = _calls(
        [t.id for t in tasks],
        [p.disease_id for p in patients],
        [h for p in patients for h in p.hidden],
    )
    return {"indices": (a, b), "patients": patients, "calls": calls}


def test_tool_output_is_a_function_of_the_arguments(
    multi_env: gym.Env, setting: dict[str, Any]
) -> None:
    a, b = setting["indices"]
    out_a = _run(multi_env, a, setting["calls"])
    out_b = _run(multi_env, b, setting["calls"])
    assert out_a == out_b
    assert any(not o.startswith("Error") for o in out_a) and any(
        o.startswith("Error") for o in out_a
    )


def test_tool_output_does_not_depend_on_the_split(
    multi_env: gym.Env, setting: dict[str, Any]
) -> None:
    other = gym.make("RareDiseaseDiagnosis-v0", split="validation")
    calls = setting["calls"][::3]
    assert _run(other, 0, calls) == _run(multi_env, setting["indices"][0], calls)
    _, info_test = multi_env.reset(seed=0)
    _, info_val = other.reset(seed=0)
    assert info_test["tools"] == info_val["tools"]
    assert info_test["messages"][0] == info_val["messages"][0], "the system prompt names no split"


def test_no_hidden_term_in_prompt_or_unrelated_output(
    multi_env: gym.Env, setting: dict[str, Any]
) -> None:
    for index, patient in zip(setting["indices"], setting["patients"], strict=True):
        obs, info = multi_env.reset(seed=0, options={"index": index})
        task = multi_env.unwrapped.task
        for term in patient.hidden:
            assert term not in obs and term not in json.dumps(task.public)
        assert patient.disease_id not in obs and patient.disease_id not in json.dumps(
            info, default=str
        )
        assert set(task.public) == {"phenotypes", "excluded", "universe"}, "no seed, no diagnosis"
        calls = [
            (n, {"query" if n == "search_diseases" else "text": w})
            for w in WORDS
            for n in ("search_diseases", "lookup_phenotype")
        ]
        for obs in _run(multi_env, index, calls):
            assert not any(term in obs for term in patient.hidden)


def test_ask_patient_is_truthful_and_counted(
    multi_env: gym.Env, kb: HpoKnowledgeBase, setting: dict[str, Any]
) -> None:
    index, patient = setting["indices"][0], setting["patients"][0]
    multi_env.reset(seed=0, options={"index": index})
    hidden = patient.hidden[0]
    replies = {}
    for term in (hidden, "HP:0000118", "HP:0000010", kb.ancestors(hidden, include_self=False)[0]):
        obs = multi_env.step(tool_call("ask_patient", hpo_id=term))[0]
        replies[term] = json.loads(obs)
        assert (
            replies[term]["answer"]
            == {"yes": "yes", "no": "no", "unknown": "not sure"}[ask(kb, patient, term).answer]
        )
    assert replies[hidden]["answer"] == "yes"
    assert hidden in [d["id"] for d in replies[hidden]["details"]]
    assert "details" not in replies["HP:0000118"], "a too-general question reveals nothing"
    for reply in replies.values():
        for detail in reply.get("details", ()):
            assert detail["id"] in patient.findings and kb.resolve_term(
                reply["id"]
            ) in kb.ancestors(detail["id"])
    obs = multi_env.step(tool_call("ask_patient", hpo_id="HP:9999999"))[0]
    assert obs.startswith("Error") and "patient" not in obs.lower().replace("ask_patient", "")
    components = multi_env.step(answer(patient.disease_id))[4]["reward_components"]
    assert components["questions_asked"] == 4.0 and components["tool_errors"] == 1.0


def test_error_messages_name_only_the_argument(multi_env: gym.Env, setting: dict[str, Any]) -> None:
    index, patient = setting["indices"][0], setting["patients"][0]
    _, info = multi_env.reset(seed=0, options={"index": index})
    for name, args in [
        ("get_disease", {"disease_id": info["task_id"]}),
        ("get_disease", {"disease_id": "OMIM:999999"}),
        ("phenotype_relatives", {"hpo_id": "HP:1234567"}),
        ("rank_by_phenotypes", {"hpo_ids": ["HP:1234567", "HP:0001166"]}),
    ]:
        obs = multi_env.step(tool_call(name, **args))[0]
        assert obs.startswith("Error") and patient.disease_id not in obs
        assert not any(t in obs for t in patient.findings)


def test_single_turn_prompt_reveals_nothing_hidden(
    kb: HpoKnowledgeBase, single_env: gym.Env
) -> None:
    for index in range(20):
        obs, _ = single_env.reset(seed=index, options={"index": index})
        patient = single_env.unwrapped.task.case
        assert not patient.hidden, "single-turn patients have no hidden findings"
        assert "Candidates" in obs and str(patient.seed) not in obs
