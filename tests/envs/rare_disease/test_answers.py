"""Reading answers by the closed grammar: ids, names, Name (id), lists; anything else is unreadable."""

from __future__ import annotations

import pytest

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.grading.answers import MAX_READ_ENTRIES, resolve_answer
from agentenv.envs.rare_disease.grading.disease_names import disease_spelling_index
from agentenv.envs.rare_disease.grading.grade import grade

MARFAN, LOEYS_DIETZ_1, APERT = "OMIM:154700", "OMIM:609192", "OMIM:101200"


@pytest.mark.parametrize(
    ("text", "ids", "how"),
    [
        ("OMIM:154700", [MARFAN], ["id"]),
        ("omim 154700", [MARFAN], ["id"]),
        ("MIM #154700", [MARFAN], ["id"]),
        ("154700", [MARFAN], ["id"]),
        ("Marfan syndrome (OMIM:154700)", [MARFAN], ["name_id"]),
        ("OMIM:154700 - Marfan syndrome", [MARFAN], ["name_id"]),
        ("OMIM:154700 Marfan syndrome", [MARFAN], ["name_id"]),
        ("OMIM:154700, 609192", [MARFAN, LOEYS_DIETZ_1], ["id", "id"]),
        ("1. A\n2) B", [None, None], ["unreadable", "unreadable"]),
        ("1. Marfan syndrome\n2) Apert syndrome", [MARFAN, APERT], ["name", "name"]),
        (
            "- **Marfan syndrome**\n* Apert syndrome.\n• 'OMIM:609192'",
            [MARFAN, APERT, LOEYS_DIETZ_1],
            ["name"] * 2 + ["id"],
        ),
        ("Marfan syndrome", [MARFAN], ["name"]),
        ("MARFAN SYNDROME", [MARFAN], ["name"]),
        ("Sotos syndrome 1", ["OMIM:117550"], ["name"]),
        ("Neurofibromatosis type 2", ["OMIM:101000"], ["name"]),
        ("Neurofibromatosis, type II", ["OMIM:101000"], ["name"]),
        ("Gaucher disease type I", ["OMIM:230800"], ["name"]),
        ("Glaucoma - sleep apnea (OMIM:137763)", ["OMIM:137763"], ["name_id"]),
        ("OMIM:137763 - Glaucoma - sleep apnea", ["OMIM:137763"], ["name_id"]),
        ("Marfan syndrom", [None], ["unreadable"]),  # a typo is no name under the grammar
        ("Huntingtons disease", [None], ["unreadable"]),
        ("OMIM:154700 or OMIM:101200", [None], ["mismatch"]),
        ("Apert syndrome (most likely)", [None], ["unreadable"]),
        ("Marfan syndrome - classic habitus", [None], ["unreadable"]),
        ("not Marfan syndrome", [None], ["unreadable"]),
        ("Marfan syndrome?", [None], ["unreadable"]),
        ("Marfan syndrome？", [None], ["unreadable"]),
        ("¿Marfan syndrome", [None], ["unreadable"]),
        ("¬Marfan syndrome", [None], ["unreadable"]),
        ("Marfan syndrome ❌", [None], ["unreadable"]),
        ("~~Marfan syndrome~~", [None], ["unreadable"]),
        ("M\u0336arfan syndrome", [None], ["unreadable"]),
        ("<!-- Marfan syndrome -->", [None], ["unreadable"]),
        ("Marfan syndrome or Apert syndrome", [None], ["unreadable"]),
        ("not OMIM:154700", [None], ["unreadable"]),
        ("Apert syndrome (OMIM:154700)", [None], ["mismatch"]),
        ("Retinitis pigmentosa 250", [None], ["unreadable"]),
        ("Nasopharyngeal carcinoma", [None], ["ambiguous"]),
        ("OMIM:999999", [None], ["unknown_id"]),
        ("ORPHA:558", [None], ["unknown_id"]),
        ("Marfan syndrome, Apert syndrome", [None], ["unreadable"]),
        ("Lissencephaly 2 linked 10", [None], ["unreadable"]),
        ("hyperthyroidism, congenital, nongoitrous, 4", [None], ["unreadable"]),
        ("Hypothyroidism, congenital, nongoitrous, 4", ["OMIM:275100"], ["name"]),
    ],
)
def test_reading(kb: HpoKnowledgeBase, text: str, ids: list, how: list) -> None:
    resolved = resolve_answer(kb, text)
    assert list(resolved.ids) == ids
    assert [e.how for e in resolved.entries] == how
    assert (resolved.unreadable is None) == (None not in ids)


@pytest.mark.parametrize(
    "text",
    [
        "Ruled out:\nMarfan syndrome",
        "Marfan syndrome\nnot",
        "OMIM:154700; ruled out",
        "Marfan syndrome\n<!-- OMIM:101200 -->",
        "Top 3:\n1. Marfan syndrome",
    ],
)
def test_one_unreadable_entry_makes_the_answer_score_zero(kb: HpoKnowledgeBase, text: str) -> None:
    resolved = resolve_answer(kb, text)
    assert resolved.unreadable is not None and resolved.unreadable.startswith("entry ")
    c = grade(resolved, [MARFAN], k=3)
    assert c["accuracy"] == 0.0 and c["hit@any"] == 0.0 and c["unresolved"] >= 1.0


def test_feedback_names_the_entry_and_why(kb: HpoKnowledgeBase) -> None:
    assert resolve_answer(kb, "Marfan syndrome\nnot").feedback == (
        "unreadable answer: entry 2: 'not' is not a disease name or id"
    )
    assert resolve_answer(kb, "OMIM:154700\nApert syndrome").feedback == (
        "read 2 prediction(s): OMIM:154700, OMIM:101200"
    )


def test_numerals_follow_type_or_end_the_name(kb: HpoKnowledgeBase) -> None:
    names = disease_spelling_index(kb)
    assert names.lookup("Retinitis pigmentosa 25").ref == "OMIM:602772"
    assert names.lookup("Retinitis pigmentosa XXV").ref == "OMIM:602772"
    assert names.lookup("Retinitis pigmentosa type 25").ref == "OMIM:602772"
    assert names.lookup("Retinitis pigmentosa 26").ref != "OMIM:602772"


def test_duplicates_count_against_the_limit(kb: HpoKnowledgeBase) -> None:
    resolved = resolve_answer(kb, "Marfan syndrome\nOMIM:154700\n154700\nApert syndrome")
    assert resolved.n_predictions == 4
    assert [e.duplicate for e in resolved.entries] == [False, True, True, False]
    c = grade(resolved, [APERT], k=3)
    assert c["over_limit"] == 1.0 and c["accuracy"] == 0.0 and c["hit@any"] == 1.0
    assert c["reciprocal_rank"] == 0.25


def test_any_accepted_diagnosis_is_a_hit(kb: HpoKnowledgeBase) -> None:
    resolved = resolve_answer(kb, "Apert syndrome")
    assert grade(resolved, [MARFAN, APERT], k=3)["hit@1"] == 1.0


def test_long_answers_are_counted_and_bounded(kb: HpoKnowledgeBase) -> None:
    text = "\n".join(f"OMIM:{154700 if i == 3 else 100000 + i}" for i in range(500))
    resolved = resolve_answer(kb, text)
    assert resolved.n_predictions == 500 and len(resolved.entries) == MAX_READ_ENTRIES
    assert resolved.unreadable is not None and grade(resolved, [MARFAN], k=3)["hit@any"] == 0.0


@pytest.mark.parametrize(
    "text",
    ["", "   ", "\n\n;;", "<answer>", "1.", "\x00\x01", "é" * 3000, "(" * 400 + "OMIM:154700)"],
)
def test_reading_never_raises(kb: HpoKnowledgeBase, text: str) -> None:
    resolved = resolve_answer(kb, text)
    assert resolved.n_predictions >= 0 and resolved.rank_of([MARFAN]) is None
