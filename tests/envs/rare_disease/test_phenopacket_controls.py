"""A phenopacket's ``id``, the one free text a case keeps (its ``row_id``: in episode records and in
what ``check-tasks`` prints), may hold no control character; a task dict's ``id`` is held to the
printable-id grammar already. Labels and descriptions are not read, so they may hold anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.tasks.phenopackets import from_phenopacket, load_phenopackets
from agentenv.errors import UserInputError


def packet(case_id: str, label: str = "Ectopia lentis") -> dict:
    return {
        "id": case_id,
        "phenotypicFeatures": [
            {"type": {"id": "HP:0001166", "label": label}, "description": label},
            {"type": {"id": "HP:0000545", "label": "Myopia"}},
        ],
        "interpretations": [{"id": "i1", "diagnosis": {"disease": {"id": "OMIM:154700"}}}],
    }


@pytest.mark.parametrize(
    ("case_id", "code", "position"),
    [
        ("PMID_1_case\u202e1", "202E", 12),
        ("case\x1b]0;OWNED\x07", "001B", 5),
        ("case-1\r", "000D", 7),
        ("\x9bcase", "009B", 1),
    ],
)
def test_a_control_character_in_a_phenopackets_id_is_refused(
    kb: HpoKnowledgeBase, case_id: str, code: str, position: int
) -> None:
    with pytest.raises(UserInputError) as err:
        from_phenopacket(kb, packet(case_id), "p.json")
    assert str(err.value) == (
        f"p.json: field 'id' holds a control character U+{code} at position {position}; remove it"
    )


def test_a_file_names_itself_and_free_text_is_not_read(
    kb: HpoKnowledgeBase, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(packet("case\x1b[8m")), encoding="utf-8")
    with pytest.raises(
        UserInputError, match=rf"^{bad}: field 'id' holds a control character U\+001B"
    ):
        load_phenopackets(kb, bad)
    good = tmp_path / "good.json"
    good.write_text(
        json.dumps(packet("PMID_1_case 1", label="lens\x1b[2J\u202e")), encoding="utf-8"
    )
    (patient,) = load_phenopackets(kb, good).patients
    assert patient.row_id == "PMID_1_case 1" and patient.present[0] == "HP:0001166"


def test_a_task_dicts_id_is_still_refused_by_the_id_grammar(tmp_path: Path) -> None:
    import gymnasium as gym

    tasks = tmp_path / "cases.jsonl"
    row = {"phenotypes": ["HP:0001166"], "diagnosis": ["OMIM:154700"], "id": "case\x1b[2K"}
    tasks.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(UserInputError, match="field 'id' must be a string of 1 to 128 printable"):
        gym.make("RareDiseaseDiagnosis-v0", tasks=str(tasks))
