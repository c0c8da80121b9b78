"""Rendering phenotypes as HPO ids, lay text, or both."""

from __future__ import annotations

import pytest

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.patients.lay_text import lay_label, render_patient, render_terms
from agentenv.envs.rare_disease.patients.simulated import Patient

P = Patient(
    "OMIM:154700",
    present=("HP:0001166", "HP:0001263"),
    hidden=("HP:0001083",),
    excluded=("HP:0001250", "HP:0004322"),
)


def test_lay_labels(kb: HpoKnowledgeBase) -> None:
    assert lay_label(kb, "HP:0001166") == "Long slender fingers"  # first EXACT layperson
    assert lay_label(kb, "HP:0000256") == "Increased size of skull"  # BROAD ones are skipped
    assert lay_label(kb, "HP:0001250") == "Seizure"  # only a RELATED lay synonym: keep the label
    assert lay_label(kb, "HP:0001263") == "Global developmental delay"  # none at all


def test_presentations(kb: HpoKnowledgeBase) -> None:
    assert render_terms(kb, ["HP:0001166"], "hpo") == "- HP:0001166 Arachnodactyly"
    assert (
        render_terms(kb, ["HP:0001166"], "both")
        == "- HP:0001166 Arachnodactyly (long slender fingers)"
    )
    assert render_terms(kb, ["HP:0001263"], "both") == "- HP:0001263 Global developmental delay"
    text = render_patient(kb, P, "text")
    assert text == (
        "The patient presents with long slender fingers and global developmental delay. "
        "The patient does not have seizure or decreased body height."
    )
    hpo = render_patient(kb, P, "hpo")
    assert hpo.startswith("Present phenotypes:\n- HP:0001166 Arachnodactyly\n")
    assert "Excluded phenotypes:\n- HP:0001250 Seizure" in hpo
    for presentation in ("hpo", "text", "both"):
        out = render_patient(kb, P, presentation)  # type: ignore[arg-type]
        assert "HP:0001083" not in out and "ctopia" not in out  # hidden findings stay hidden
        assert out == render_patient(kb, P, presentation)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="presentation must be one of"):
        render_patient(kb, P, "html")  # type: ignore[arg-type]
