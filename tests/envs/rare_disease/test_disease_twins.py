"""One disease in two catalogs (twins) is one disease under ``omim+orpha``; nothing changes under ``omim``."""

from __future__ import annotations

import gymnasium as gym
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase, load_hpo_kb
from agentenv.engine.actions import answer
from agentenv.engine.parsing import Answer
from agentenv.envs.rare_disease.grading.answers import resolve_answer
from agentenv.envs.rare_disease.grading.disease_twins import (
    disease_twins,
    twins_by_name,
    with_twins,
)
from agentenv.envs.rare_disease.grading.grade import grade_answer_text
from agentenv.envs.rare_disease.patients.splits import split_diseases

FLOATING_HARBOR = ("OMIM:136140", "ORPHA:2044")
GAUCHER_1 = ("OMIM:230800", "ORPHA:77259")  # "Gaucher disease, type I" = "Gaucher disease type 1"
PHENOTYPES = ["HP:0001250", "HP:0001263", "HP:0000252"]


@pytest.fixture(scope="module")
def both() -> HpoKnowledgeBase:
    return load_hpo_kb("omim+orpha")


def _accuracy(kb: HpoKnowledgeBase, gold: str, text: str) -> float:
    return grade_answer_text(kb, [gold], Answer(text), k=3, questions_asked=0)["accuracy"]


def test_the_cross_map_pairs_each_twin_once(both: HpoKnowledgeBase) -> None:
    twins = disease_twins(both)
    assert both.release == "2025-01-16" and len(twins) == 2 * 657
    assert all(twins[twins[d]] == d and d.split(":")[0] != twins[d].split(":")[0] for d in twins)
    assert twins[FLOATING_HARBOR[0]] == FLOATING_HARBOR[1]
    assert twins[GAUCHER_1[0]] == GAUCHER_1[1]
    test = [d for d in split_diseases(both, "test") if d in twins]
    assert len(test) == 148  # of the 1,259 test diseases


def test_every_twin_is_credited_by_its_name_and_by_either_id(both: HpoKnowledgeBase) -> None:
    """For all 657 pairs, both ways: the gold's own name, its id and its twin's id score 1."""
    for gold, twin in disease_twins(both).items():
        name = both.disease_name(gold)
        for text in (name, gold, twin, f"{name} ({twin})"):
            assert _accuracy(both, gold, text) == 1.0, (gold, text)


@pytest.mark.parametrize(
    "env_id", ["RareDiseaseDiagnosis-v0", "RareDiseaseDiagnosis-SingleTurn-v0"]
)
@pytest.mark.parametrize("gold", FLOATING_HARBOR)
def test_the_env_credits_floating_harbor_in_both_catalogs(env_id: str, gold: str) -> None:
    case = {"phenotypes": PHENOTYPES, "diagnosis": [gold]}
    env = gym.make(env_id, universe="omim+orpha", tasks=[case])  # no split to sample
    for text in ("Floating-Harbor syndrome", *FLOATING_HARBOR):
        env.reset(options={"index": 0})
        info = env.step(answer(text))[4]
        assert info["reward_components"]["accuracy"] == 1.0, (gold, text, info["answer_feedback"])
        assert info["gold"]["diagnosis"] == [gold]  # the gold shown is the case's own


def test_a_twin_named_twice_is_one_disease_listed_twice(both: HpoKnowledgeBase) -> None:
    read = resolve_answer(both, "Floating-Harbor syndrome\nORPHA:2044\nOMIM:154700")
    assert read.unreadable is None and read.n_predictions == 3
    assert [e.duplicate for e in read.entries] == [False, True, False]


def test_a_name_shared_by_two_different_diseases_is_still_refused(both: HpoKnowledgeBase) -> None:
    read = resolve_answer(both, "Nasopharyngeal carcinoma")  # two OMIM entries, no twins
    assert read.unreadable is not None and read.entries[0].how == "ambiguous"
    assert _accuracy(both, "OMIM:161550", "Nasopharyngeal carcinoma") == 0.0
    assert _accuracy(both, FLOATING_HARBOR[0], GAUCHER_1[1]) == 0.0  # another pair's twin
    # a name of one catalog shared by two of the other catalog makes no twins
    assert twins_by_name([("OMIM:1", "B"), ("OMIM:2", "B"), ("ORPHA:8", "b")]) == {}
    assert twins_by_name([("ORPHA:1", "B"), ("ORPHA:2", "B")]) == {}  # one catalog: no twins


def test_the_default_universe_is_unchanged() -> None:
    kb = load_hpo_kb()
    assert disease_twins(kb) == {} and with_twins(kb, ["OMIM:136140"]) == ("OMIM:136140",)
    assert _accuracy(kb, FLOATING_HARBOR[0], "Floating-Harbor syndrome") == 1.0
    read = resolve_answer(kb, "ORPHA:2044")
    assert (
        read.entries[0].how == "unknown_id"
        and _accuracy(kb, FLOATING_HARBOR[0], "ORPHA:2044") == 0.0
    )
    assert resolve_answer(kb, "Nasopharyngeal carcinoma").entries[0].how == "ambiguous"
    case = {"phenotypes": PHENOTYPES, "diagnosis": [GAUCHER_1[0]]}
    env = gym.make("RareDiseaseDiagnosis-SingleTurn-v0", tasks=[case])
    env.reset(options={"index": 0})
    info = env.step(answer("Gaucher disease type 1"))[
        4
    ]  # the OMIM name by the numeral rule, as before
    assert info["reward_components"]["accuracy"] == 1.0
