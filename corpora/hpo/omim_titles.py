"""Which OMIM entries are not Mendelian diseases a clinician would diagnose, from their titles.

Why: OMIM marks entries that are not single-gene diseases -- ``{...}`` for
susceptibility to a multifactorial disorder or an infection, ``[...]`` for
"non-diseases" (blood groups, lab-value variants), and quantitative trait loci
-- but ``phenotype.hpoa`` drops those braces and brackets from the titles. Left
in, they become "rare diseases" to diagnose: "Body mass index quantitative trait
locus 20" was a test-split answer. OMIM itself is not redistributable, so the
marks are recognised by the words OMIM writes inside them, which HPO keeps:

* ``qtl``: "quantitative trait locus";
* ``susceptibility``: "susceptibility" (OMIM's ``{...}`` wording), except for
  titles that start with "Immunodeficiency": those are Mendelian immune defects
  named after the infections they let in;
* ``non-disease``: a modifier locus ("modifier"), a blood group, a protein
  polymorphism, or a plasma level ("level in plasma").

The rule is conservative: a marked entry whose title uses none of these words
stays in the universe (for example a drug sensitivity). ``benchmarks/
calibrate_patients.py`` prints the count per category and per split.

Example:
    >>> non_clinical_reason("Body mass index quantitative trait locus 20")
    'qtl'
    >>> non_clinical_reason("Colorectal cancer, susceptibility to, 3")
    'susceptibility'
    >>> non_clinical_reason("Immunodeficiency 65, susceptibility to viral infections") is None
    True
    >>> non_clinical_reason("Blood group, cromer system")
    'non-disease'
    >>> non_clinical_reason("Marfan syndrome") is None
    True
"""

from __future__ import annotations

import re
from typing import Literal

NonClinical = Literal["qtl", "susceptibility", "non-disease"]

_RULES: tuple[tuple[NonClinical, re.Pattern[str]], ...] = (
    ("qtl", re.compile(r"quantitative trait locus", re.IGNORECASE)),
    ("susceptibility", re.compile(r"^(?!immunodeficiency\b).*\bsusceptibility\b", re.IGNORECASE)),
    (
        "non-disease",
        re.compile(
            r"\bmodifier\b|^blood group\b|\bpolymorphism\b|\blevel in plasma\b", re.IGNORECASE
        ),
    ),
)


def non_clinical_reason(title: str) -> NonClinical | None:
    """The category of an OMIM title that is not a diagnosable Mendelian disease, or None."""
    for reason, pattern in _RULES:
        if pattern.search(title):
            return reason
    return None


def is_clinical_omim(disease_id: str, title: str) -> bool:
    """False for an OMIM entry :func:`non_clinical_reason` flags; True for every other id."""
    return not (disease_id.startswith("OMIM:") and non_clinical_reason(title) is not None)
