"""The real-patient split, the one presentation protocol, and the published disease mix."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.engine.actions import tool_call
from agentenv.envs.rare_disease.dialogue.patient_answers import ask
from agentenv.envs.rare_disease.patients.disease_mix import (
    PUBLISHED_WEIGHTS,
    fit_weights,
    mixed_case_list,
    profile_sizes,
)
from agentenv.envs.rare_disease.patients.simulated import CALIBRATED, PatientSampler
from agentenv.envs.rare_disease.patients.splits import PUBLISHED, cases_checksum
from agentenv.envs.rare_disease.tasks import real_cases
from agentenv.envs.rare_disease.tasks.real_cases import (
    REAL_CASES_PATH,
    REAL_CASES_SHA256,
    load_real_patients,
    real_case_sources,
    real_split_patients,
)
from agentenv.evaluation.agents import make_agent
from agentenv.evaluation.runner import RunConfig, run_episode
from agentenv.multiagent import make as make_dialogue

V0, SINGLE = "RareDiseaseDiagnosis-v0", "RareDiseaseDiagnosis-SingleTurn-v0"


def test_the_shipped_file_and_licence(kb: HpoKnowledgeBase) -> None:
    assert hashlib.sha256(REAL_CASES_PATH.read_bytes()).hexdigest() == REAL_CASES_SHA256
    licence = REAL_CASES_PATH.parent / "LICENSE-phenopacket-store"
    assert "BSD 3-Clause" in licence.read_text() and "Monarch Initiative" in licence.read_text()
    records = load_real_patients(kb)
    assert len(records) == 536 and len({p.disease_id for p in records}) == 129
    assert len(real_split_patients(kb)) == 500  # 36 exact repeats served once
    assert all(p.source.startswith("real:") and not p.closed_world for p in records)


@pytest.mark.parametrize("env_id", [V0, SINGLE])
def test_the_real_split_never_shows_provenance(env_id: str) -> None:
    """``source`` names the paper's file (often the gene): not in prompts, Task.public, ids or infos."""
    sources = {s.split(":", 1)[1] for s in real_case_sources().values()}
    env = gym.make(env_id, split="real")
    assert env.unwrapped.corpus_checksums["patients"] == REAL_CASES_SHA256
    for i in range(0, 500, 50):
        obs, info = env.reset(seed=i, options={"index": i})
        task = env.unwrapped.task
        assert task.split == "real" and task.kind == "imported"
        seen = json.dumps(
            [obs, info["messages"], task.public, task.id, info.get("task_id")], default=str
        )
        assert "phenopacket" not in seen.lower() and "PMID" not in seen
        assert not any(s in seen for s in sources)


def test_real_cases_are_presented_as_simulated_ones(kb: HpoKnowledgeBase) -> None:
    """Multi-turn: a seeded 40% hidden, at least 3 shown, answers from the full record in an open world."""
    multi = gym.make(V0, split="real").unwrapped.tasks
    single = gym.make(SINGLE, split="real").unwrapped.tasks
    shares = []
    for i in range(len(multi)):
        p, q = multi[i].case, single[i].case
        assert set(p.present) | set(p.hidden) == set(p.findings) == set(q.present) and not q.hidden
        assert len(p.present) >= min(3, len(p.findings))
        shares.append(len(p.hidden) / len(p.findings))
    assert 0.25 < float(np.mean(shares)) < 0.4  # 40% drawn, fewer where at least 3 must stay
    p = next(
        multi[i].case for i in range(len(multi)) if multi[i].case.hidden and multi[i].case.excluded
    )
    hidden = p.hidden[0]
    assert ask(kb, p, hidden).answer == "yes" and hidden in ask(kb, p, hidden).revealed
    assert ask(kb, p, p.excluded[0]).answer == "no"
    assert ask(kb, p, _unrecorded(kb, p)).answer == "unknown"


def _unrecorded(kb: HpoKnowledgeBase, p) -> str:  # noqa: ANN001 - a Patient
    below = {a for f in p.findings for a in kb.ancestors(f)} | {
        d for e in p.excluded for d in kb.descendants(e)
    }
    return next(
        t for t in ("HP:0001250", "HP:0000365", "HP:0001166", "HP:0000252") if t not in below
    )


def test_the_patient_answers_not_sure_to_anything_unrecorded(kb: HpoKnowledgeBase) -> None:
    """Simulated patients live in the same open world: recorded exclusions are "no", the rest "not sure"."""
    env = gym.make(V0, split="validation")
    env.reset(seed=0, options={"index": 0})
    p = env.unwrapped.task.case
    assert not p.closed_world
    obs, *_ = env.step(tool_call("ask_patient", hpo_id=_unrecorded(kb, p)))
    assert json.loads(obs)["answer"] in ("not sure", "unknown")


def test_a_users_cases_go_through_the_same_presentation(
    tmp_path: Path, kb: HpoKnowledgeBase
) -> None:
    path = tmp_path / "cases.jsonl"
    rows = [
        {k: v for k, v in json.loads(line).items() if k != "source"}
        for line in REAL_CASES_PATH.read_text().splitlines()[:40]
    ]
    unique = list({json.dumps(r, sort_keys=True): r for r in rows}.values())
    path.write_text("\n".join(json.dumps(r) for r in unique) + "\n")
    first = gym.make(V0, tasks=str(path)).unwrapped.tasks
    again = gym.make(V0, tasks=str(path)).unwrapped.tasks
    assert [first[i].id for i in range(len(first))] == [again[i].id for i in range(len(again))]
    assert sum(bool(first[i].case.hidden) for i in range(len(first))) > len(first) // 2
    whole = gym.make(SINGLE, tasks=str(path)).unwrapped.tasks
    assert not any(whole[i].case.hidden for i in range(len(whole)))


def test_the_dialogue_serves_the_real_split() -> None:
    env = make_dialogue("DiagnosisDialogue-v0", split="real")
    env.reset(seed=3)
    dialogue = env.unwrapped
    assert dialogue.split == "real" and len(dialogue.tasks) == 500
    assert (
        dialogue.tasks[0].id == gym.make(V0, split="real").unwrapped.tasks[0].id
    )  # one presentation


def test_the_disease_mix_is_fitted_on_the_real_cases(kb: HpoKnowledgeBase) -> None:
    golds = [p.disease_id for p in load_real_patients(kb)]
    assert fit_weights(kb, golds) == pytest.approx(PUBLISHED_WEIGHTS, abs=1e-4)
    sizes = profile_sizes(kb)
    real_median = np.median([sizes[kb.disease_index[g]] for g in golds])
    for split in ("train", "validation"):
        cases = mixed_case_list(kb, split)  # type: ignore[arg-type]
        median = np.median([sizes[kb.disease_index[c.disease_id]] for c in cases])
        assert 0.75 * real_median <= median <= 1.25 * real_median, (split, median, real_median)
    uniform = mixed_case_list(kb, "test", "uniform")
    assert cases_checksum(uniform) == PUBLISHED[(kb.release, "omim")]["test"].checksum
    with pytest.raises(ValueError, match="disease_mix"):
        gym.make(V0, disease_mix="zipf")


def test_uniform_mix_is_a_named_choice() -> None:
    env = gym.make(V0, split="test", disease_mix="uniform").unwrapped
    default = gym.make(V0, split="test").unwrapped
    assert env.corpus_checksums["patients"] != default.corpus_checksums["patients"]
    assert (
        len({env.tasks[i].gold["diagnosis"][0] for i in range(100)}) == 100
    )  # one case per disease


def _accuracy(env_id: str, split: str, agent: str) -> float:
    env = gym.make(env_id, split=split)
    bot = make_agent(agent)
    config = RunConfig(env_id=env_id, agent=agent, split=split)
    n = len(env.unwrapped.tasks)
    return float(
        np.mean(
            [run_episode(env, bot, config, i, i)["reward_components"]["accuracy"] for i in range(n)]
        )
    )


def test_agents_score_on_simulated_patients_as_on_real_ones() -> None:
    """The done-when of the calibration, on validation (where it was tuned; test is reported, not tuned):
    ranker and bm25 within x0.85-1.18 of their real-split scores, in the same order, package defaults."""
    scores = {
        (agent, split): _accuracy(V0, split, agent)
        for agent in ("phenotype-ranker", "bm25")
        for split in ("validation", "real")
    }
    for agent in ("phenotype-ranker", "bm25"):
        ratio = scores[(agent, "validation")] / scores[(agent, "real")]
        assert 0.85 <= ratio <= 1.18, (agent, ratio, scores)
    assert scores[("phenotype-ranker", "validation")] > scores[("bm25", "validation")]
    assert scores[("phenotype-ranker", "real")] > scores[("bm25", "real")]


def test_simulated_patients_draw_common_findings(kb: HpoKnowledgeBase) -> None:
    """Reports record a disease's common findings: exact terms listed by a median of ~235 diseases on real cases."""
    sampler = PatientSampler(kb, CALIBRATED)
    listed = []
    for case in mixed_case_list(kb, "validation")[:300]:
        p = sampler.sample_case(*case)
        annotated = set(kb.phenotype_indices(kb.disease_index[p.disease_id]).tolist())
        listed += [
            int(kb.n_diseases[kb.graph.index[t]])
            for t in p.present
            if kb.graph.index[t] in annotated
        ]
    assert 150 <= np.median(listed) <= 350
    assert real_cases.ATTRIBUTION.startswith("Real cases: GA4GH phenopacket-store")
