"""Answer resolution: ids, names, synonyms, fuzzy matches, unresolved entries and duplicates."""

from __future__ import annotations

import pytest

from agentenv.corpora.hpo import HpoKnowledgeBase
from agentenv.envs.rare_disease.answers import resolve_answer, split_entries
from agentenv.envs.rare_disease.disease_names import disease_name_index
from agentenv.envs.rare_disease.grading import grade

MARFAN, LOEYS_DIETZ_1, APERT = "OMIM:154700", "OMIM:609192", "OMIM:101200"


@pytest.mark.parametrize(
    ("text", "entries"),
    [
        ("A\nB\nC", ["A", "B", "C"]),
        ("A; B;C", ["A", "B", "C"]),
        ("1. A\n2) B\n3. C", ["A", "B", "C"]),
        ("1. A 2. B 3. C", ["A", "B", "C"]),
        ("1) A, type 2 2) B", ["A, type 2", "B"]),
        ("- **A**\n* B\n• C", ["A", "B", "C"]),
        ("Top diagnoses:\n\n1. A\n\n", ["A"]),
        ("Neurofibromatosis, type II", ["Neurofibromatosis, type II"]),
        ("Spinocerebellar ataxia 3. Then B", ["Spinocerebellar ataxia 3. Then B"]),
    ],
)
def test_split_entries(text: str, entries: list[str]) -> None:
    assert split_entries(text) == entries


@pytest.mark.parametrize(
    ("text", "ids", "how"),
    [
        ("OMIM:154700", [MARFAN], ["id"]),
        ("omim 154700", [MARFAN], ["id"]),
        ("MIM #154700", [MARFAN], ["id"]),
        ("154700", [MARFAN], ["id"]),
        ("Marfan syndrome (OMIM:154700)", [MARFAN], ["id"]),
        ("OMIM:154700, 609192", [MARFAN, LOEYS_DIETZ_1], ["id", "id"]),
        ("OMIM:154700 or OMIM:101200", [None, None], ["mixed", "mixed"]),
        ("OMIM:154700 / OMIM:101200", [MARFAN, APERT], ["id", "id"]),
        ("or OMIM:154700 OMIM:154700", [None], ["mixed"]),
        ("Marfan syndrome", [MARFAN], ["exact"]),
        ("MARFAN SYNDROME", [MARFAN], ["synonym"]),
        ("Sotos syndrome 1", ["OMIM:117550"], ["synonym"]),
        ("Neurofibromatosis type 2", ["OMIM:101000"], ["normalised"]),
        ("Gaucher disease type I", ["OMIM:230800"], ["normalised"]),
        ("Marfan syndrom", [MARFAN], ["fuzzy"]),
        ("Huntingtons disease", ["OMIM:143100"], ["fuzzy"]),
        ("OMIM:154700 - Marfan syndrome", [MARFAN], ["id"]),
        ("Apert syndrome (most likely)", [None], ["mixed"]),
        ("Marfan syndrome - classic habitus", [None], ["mixed"]),
        ("not Marfan syndrome", [None], ["unresolved"]),
        ("Marfan syndrome?", [None], ["hedged"]),
        ("Marfan syndrome or Apert syndrome", [None], ["unresolved"]),
        ("Apert syndrome (or Marfan syndrome)", [None], ["mixed"]),
        ("not OMIM:154700", [None], ["mixed"]),
        ("Apert syndrome (OMIM:154700)", [None], ["mixed"]),
        ("Marfan syndrome (OMIM:154700) or Apert syndrome (OMIM:101200)", [None, None], ["mixed", "mixed"]),
        ("OMIM:１５４７００", [None], ["unresolved"]),
        ("Retinitis pigmentosa 250", [None], ["unresolved"]),
        ("Lowry syndrome", [None], ["unresolved"]),
        ("Nasopharyngeal carcinoma", [None], ["ambiguous"]),
        ("Ehlers-Danlos syndrome", [None], ["unresolved"]),
        ("OMIM:999999", [None], ["unknown_id"]),
        ("ORPHA:558", [None], ["unknown_id"]),
        ("Marfan syndrome, Apert syndrome", [None], ["unresolved"]),
    ],
)
def test_resolution(kb: HpoKnowledgeBase, text: str, ids: list, how: list) -> None:
    resolved = resolve_answer(kb, text)
    assert list(resolved.ids) == ids
    assert [e.how for e in resolved.entries] == how


def test_fuzzy_never_changes_a_number(kb: HpoKnowledgeBase) -> None:
    index = disease_name_index(kb)
    assert index.resolve("Retinitis pigmentosa 25").disease_id == "OMIM:602772"
    assert index.resolve("Retinitis pigmentoza 25").disease_id == "OMIM:602772"
    assert index.resolve("Retinitis pigmentoza 2500").disease_id is None


def test_duplicates_count_against_the_limit(kb: HpoKnowledgeBase) -> None:
    resolved = resolve_answer(kb, "Marfan syndrome\nOMIM:154700\n154700\nApert syndrome")
    assert resolved.n_predictions == 4
    assert [e.duplicate for e in resolved.entries] == [False, True, True, False]
    c = grade(resolved, [APERT], k=3)
    assert c["over_limit"] == 1.0 and c["accuracy"] == 0.0 and c["hit@any"] == 1.0
    assert c["reciprocal_rank"] == 0.25


def test_unresolved_entries_are_wrong_and_counted(kb: HpoKnowledgeBase) -> None:
    resolved = resolve_answer(kb, "no idea\nsomething genetic\nMarfan syndrome")
    c = grade(resolved, [MARFAN], k=3)
    assert c["unresolved"] == 2.0 and c["n_predictions"] == 3.0
    assert c["accuracy"] == 1.0 and c["hit@1"] == 0.0 and c["reciprocal_rank"] == pytest.approx(1 / 3)


def test_any_accepted_diagnosis_is_a_hit(kb: HpoKnowledgeBase) -> None:
    resolved = resolve_answer(kb, "Apert syndrome")
    assert grade(resolved, [MARFAN, APERT], k=3)["hit@1"] == 1.0


def test_long_answers_resolve_fast_and_bounded(kb: HpoKnowledgeBase) -> None:
    text = "\n".join(f"made-up syndrome number {i} with findings" for i in range(500))
    resolved = resolve_answer(kb, text)
    assert resolved.n_predictions == 500 and resolved.unresolved == 500


@pytest.mark.parametrize("text", ["", "   ", "\n\n;;", "<answer>", "1.", "\x00\x01", "é" * 3000])
def test_resolution_never_raises(kb: HpoKnowledgeBase, text: str) -> None:
    resolved = resolve_answer(kb, text)
    assert resolved.n_predictions >= 0
