"""The universe holds diagnosable diseases: OMIM susceptibility entries, QTLs and non-diseases are out."""

from __future__ import annotations

from collections import Counter

import pytest

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.corpora.hpo.omim_titles import is_clinical_omim, non_clinical_reason


@pytest.mark.parametrize(
    ("title", "reason"),
    [
        ("Fetal hemoglobin quantitative trait locus 1", "qtl"),
        ("Macular degeneration, age-related, 15, susceptibility to", "susceptibility"),
        ("Autism susceptibility, X-linked 1", "susceptibility"),
        ("Cystic fibrosis, modifier of, 1", "non-disease"),
        ("Pa polymorphism of alpha-2-globulin", "non-disease"),
        ("Immunoglobulin D level in plasma, low", "non-disease"),
        # Mendelian diseases whose titles only look like the categories stay in.
        ("Immunodeficiency 65, susceptibility to viral infections", None),
        ("Piebald trait", None),
        ("Glucocorticoid resistance", None),
        ("Hyper-IgE recurrent infection syndrome", None),
    ],
)
def test_titles(title: str, reason: str | None) -> None:
    assert non_clinical_reason(title) == reason


def test_only_omim_ids_are_filtered() -> None:
    assert not is_clinical_omim("OMIM:612229", "Colorectal cancer, susceptibility to, 3")
    assert is_clinical_omim("ORPHA:1", "Colorectal cancer, susceptibility to, 3")


def test_the_universe_leaves_them_out(kb: HpoKnowledgeBase) -> None:
    flagged = Counter(
        non_clinical_reason(kb.disease_name(d))
        for d in kb.all_disease_ids()
        if d.startswith("OMIM:") and kb.disease(d).phenotypes
    )
    assert flagged["susceptibility"] > 150 and flagged["qtl"] >= 3 and flagged["non-disease"] >= 3
    assert not any(non_clinical_reason(kb.disease_name(d)) for d in kb.disease_ids)
    assert kb.n_universe == flagged[None]
