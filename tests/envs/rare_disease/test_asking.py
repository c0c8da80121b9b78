"""Asking costs what it costs a doctor: the patient answers as a person does, and a blind sweep does not pay.

The attack these guard against: a patient that answered a broad question with every finding
beneath it revealed 99.4% of hidden findings to a sweep of the 157 second-level HPO terms, and
the sweep beat every honest scripted doctor; in the dialogue one 157-id message did it for the
price of one turn.
"""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.dialogue.blind_sweep import BlindSweepDoctor, second_level_terms
from agentenv.envs.rare_disease.dialogue.doctor_patient import DiagnosisDialogueEnv
from agentenv.envs.rare_disease.dialogue.patient_answers import ask
from agentenv.envs.rare_disease.dialogue.patient_claims import MAX_FINDINGS_PER_MESSAGE, check_reply
from agentenv.envs.rare_disease.dialogue.scripted_doctor import AnswerAtOnceDoctor, AskingDoctor
from agentenv.envs.rare_disease.dialogue.scripted_patient import ScriptedPatient
from agentenv.envs.rare_disease.patients.simulated import Patient
from agentenv.multiagent import make
from agentenv.multiagent.policy_helpers import PolicyLike, act_with, say
from agentenv.multiagent.single_agent import as_single_agent
from agentenv.rewards.config import PRESETS

N_TASKS = 100
"""Validation tasks 0..99 (task i with seed i) for the policy comparisons."""


@pytest.fixture(scope="module")
def single() -> gym.Env:
    return gym.make("agentenv:RareDiseaseDiagnosis-v0", split="validation")


@pytest.fixture(scope="module")
def dialogue() -> DiagnosisDialogueEnv:
    return make("DiagnosisDialogue-v0", split="validation")


def _patients(env: gym.Env, n: int) -> list[Patient]:
    return [env.unwrapped.tasks[i].case for i in range(n)]


def _play(env: gym.Env, policy: PolicyLike, n: int) -> list[dict[str, float]]:
    rows = []
    for i in range(n):
        obs, info = env.reset(seed=i, options={"index": i})
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(act_with(policy, obs, info))
            done = terminated or truncated
        rows.append(dict(info["reward_components"]))
    return rows


# ----- the reveal rule ----------------------------------------------------------------------


def test_a_sweep_of_second_level_terms_reveals_no_deep_finding(
    kb: HpoKnowledgeBase, single: gym.Env
) -> None:
    sweep = second_level_terms(kb)
    assert len(sweep) == 157
    hidden = revealed = 0
    for patient in _patients(single, 200):
        for q in sweep:
            reply = ask(kb, patient, q)
            for f in reply.revealed:  # only the term itself or a direct child: never deeper
                assert f == q or q in kb.parents(f), (q, f)
        named = {f for q in sweep for f in ask(kb, patient, q).revealed}
        secret = {h for h in patient.hidden if h not in patient.present}
        hidden, revealed = hidden + len(secret), revealed + len(secret & named)
    assert revealed / hidden < 0.10  # 99.4% under the old rule; 6.9% now


def test_a_finding_is_revealed_by_itself_or_its_direct_parent_only(
    kb: HpoKnowledgeBase, single: gym.Env
) -> None:
    checked = 0
    for patient in _patients(single, 60):
        for h in patient.hidden:
            if h in patient.present:
                continue
            assert h in ask(kb, patient, h).revealed
            parents = set(kb.parents(h))
            for p in parents:
                if not kb.too_general[kb.term_index(p)]:
                    assert h in ask(kb, patient, p).revealed
            grandparents = {g for p in parents for g in kb.parents(p)} - parents
            for g in grandparents:
                reply = ask(kb, patient, g)
                assert (
                    reply.answer == "yes" and h not in reply.revealed
                )  # presence, not the finding
                checked += 1
    assert checked > 50


# ----- the dialogue: a cap per message, the reply bounded, the same cost -----------------------


def _ids_message(terms: list[str]) -> str:
    return say("Do you have " + ", ".join(terms) + "?")


def test_a_message_over_the_cap_is_refused_with_an_explanation(
    kb: HpoKnowledgeBase, dialogue: DiagnosisDialogueEnv
) -> None:
    sweep = list(second_level_terms(kb))
    dialogue.reset(seed=0, options={"index": 0})
    dialogue.step(_ids_message(sweep))  # one message with all 157
    info = dialogue.infos["doctor"]
    reason = info["parse_error"]
    assert f"at most {MAX_FINDINGS_PER_MESSAGE}" in reason and "nothing was passed on" in reason
    assert dialogue.agent_selection == "doctor"  # the patient never read it
    assert dialogue.observe("doctor").startswith("Error: the message asks about more than")
    assert all(
        m["role"] != "user" or "HP:" not in m["content"]
        for m in dialogue.infos["patient"]["messages"][1:]
    )
    dialogue.step(_ids_message(sweep[:MAX_FINDINGS_PER_MESSAGE]))  # at the cap: passed on
    assert "parse_error" not in dialogue.infos["doctor"] and dialogue.agent_selection == "patient"
    reply = ScriptedPatient(kb).act(dialogue.observe("patient"), dialogue.infos["patient"])
    dialogue.step(reply)
    assert dialogue.rewards["patient"] == 1.0
    assert len(reply.splitlines()) == MAX_FINDINGS_PER_MESSAGE
    assert (
        f"at most {MAX_FINDINGS_PER_MESSAGE}" in dialogue.infos["doctor"]["messages"][0]["content"]
    )


def test_a_distinct_id_flood_is_refused_on_every_turn(
    kb: HpoKnowledgeBase, dialogue: DiagnosisDialogueEnv
) -> None:
    # 32 KB of different ids, real or not, as the flood: every turn is refused with a parse
    # error and the episode goes on (its cost per turn is timed by benchmarks/asking_doctor.py).
    ids, size, number = [], 0, 1
    while size < 32_000:
        ids.append(f"HP:{number:07d}")
        size += 12
        number += 1
    flood = _ids_message(ids)
    assert len(flood) <= dialogue.action_space("doctor").max_length
    dialogue.reset(seed=0, options={"index": 0})
    for _ in range(6):
        dialogue.step(flood)
        assert "parse_error" in dialogue.infos["doctor"]
        assert not dialogue.terminations["doctor"]


def test_the_reply_stays_under_the_patient_limit_whatever_the_record(
    kb: HpoKnowledgeBase, dialogue: DiagnosisDialogueEnv
) -> None:
    # A record with hundreds of findings (an imported one could have them), asked about their
    # parents with the longest labels: the reply is still bounded and still faithful.
    index = kb.graph.index
    skeletal = [d for child in kb.children("HP:0000924") for d in kb.descendants(child)]
    findings = list(dict.fromkeys(skeletal))[:600]
    parents = sorted(
        {p for f in findings for p in kb.parents(f) if not kb.too_general[index[p]]},
        key=lambda p: -sum(p in kb.parents(f) for f in findings),
    )[:MAX_FINDINGS_PER_MESSAGE]
    patient = Patient("OMIM:154700", present=(), hidden=tuple(findings), findings=tuple(findings))
    dialogue.reset(seed=0, options={"task": dataclasses.replace(dialogue.tasks[0], case=patient)})
    dialogue.step(_ids_message(parents))
    reply = ScriptedPatient(kb).act(dialogue.observe("patient"), dialogue.infos["patient"])
    assert len(reply) < dialogue.action_space("patient").max_length
    dialogue.step(reply)
    assert dialogue.rewards["patient"] == 1.0 and "parse_error" not in dialogue.infos["patient"]


def test_volunteering_deep_findings_under_a_broad_question_is_caught(kb: HpoKnowledgeBase) -> None:
    deep = "HP:0001166"  # Arachnodactyly, under Slender finger, under Abnormal finger morphology
    parent = kb.parents(deep)[0]
    grandparent = kb.parents(parent)[0]
    assert grandparent not in kb.parents(deep)
    patient = Patient("OMIM:154700", present=(), hidden=(deep,), findings=(deep,))
    said = f"Yes, I have it ({grandparent}), in particular {deep}."
    assert check_reply(kb, patient, said, [grandparent], [grandparent]).volunteered == (deep,)
    said = f"Yes, I have it ({parent}), in particular {deep}."
    assert check_reply(kb, patient, said, [parent], [parent]).volunteered == ()


def test_a_question_costs_the_same_in_both_envs(
    kb: HpoKnowledgeBase, single: gym.Env, dialogue: DiagnosisDialogueEnv
) -> None:
    n = 15
    for honest, tool_version, say_version in (
        (True, AskingDoctor(kb, ask_with="ask_patient"), AskingDoctor(kb)),
        (
            False,
            BlindSweepDoctor(kb, ask_with="ask_patient", batch=MAX_FINDINGS_PER_MESSAGE),
            BlindSweepDoctor(kb),
        ),
    ):
        a = _play(single, tool_version, n)
        b = _play(as_single_agent(dialogue, agent="doctor"), say_version, n)
        for x, y in zip(a, b, strict=True):
            for key in ("questions_asked", "tool_calls", "turns", "accuracy"):
                assert x[key] == y[key], (honest, key)
            for preset in PRESETS.values():
                if preset.required_components() <= set(x):  # the presets for this env's components
                    assert preset.combine(x) == preset.combine(y)
        assert np.mean([r["questions_asked"] for r in b]) > (15 if honest else 150)


# ----- the blind sweep does not pay -----------------------------------------------------------


def test_the_blind_sweep_does_not_beat_the_best_honest_doctor(
    kb: HpoKnowledgeBase, single: gym.Env, dialogue: DiagnosisDialogueEnv
) -> None:
    envs = {"single": single, "dialogue": as_single_agent(dialogue, agent="doctor")}
    honest = {
        "single": [AnswerAtOnceDoctor(), AskingDoctor(kb, ask_with="ask_patient")],
        "dialogue": [AnswerAtOnceDoctor(), AskingDoctor(kb)],
    }
    blind = {
        "single": [
            BlindSweepDoctor(kb, ask_with="ask_patient"),
            BlindSweepDoctor(kb, ask_with="ask_patient", drill=True),
        ],
        "dialogue": [BlindSweepDoctor(kb)],
    }
    for name, env in envs.items():
        honest_rows = [_play(env, p, N_TASKS) for p in honest[name]]
        blind_rows = [_play(env, p, N_TASKS) for p in blind[name]]
        for preset_name, preset in PRESETS.items():
            if not preset.required_components() <= set(honest_rows[0][0]):
                continue  # a preset of another family (first-call-credit: MediaSearch)
            best = max(np.mean([preset.combine(r) for r in rows]) for rows in honest_rows)
            for policy, rows in zip(blind[name], blind_rows, strict=True):
                score = np.mean([preset.combine(r) for r in rows])
                assert score <= best, (name, preset_name, policy.name, score, best)
