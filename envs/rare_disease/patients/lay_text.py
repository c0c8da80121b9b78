"""Render a patient's phenotypes for a prompt: as HPO ids with labels, as lay text, or both.

Why three presentations: HPO ids test ontology-grounded reasoning; lay text
("long slender fingers" for Arachnodactyly) tests whether an agent can map a
description back to the ontology, as a clinician reading a referral letter
must. A lay synonym is the first ``EXACT`` synonym of type ``layperson`` in
hp.obo, in file order; terms without one use their label. BROAD/NARROW/RELATED
lay synonyms are not used: "Epilepsy" is a RELATED lay synonym of "Seizure",
and saying it would change the finding. The output depends only on the terms
and the HPO release, so it is deterministic.

Hidden findings are never rendered: :func:`render_patient` shows the visible
present terms and the excluded ones only.

Example:
    >>> join_phrases(["long slender fingers"])
    'long slender fingers'
    >>> join_phrases(["long slender fingers", "a big head", "short stature"])
    'long slender fingers, a big head and short stature'
    >>> join_phrases(["fever", "seizures"], "or")
    'fever or seizures'
    >>> sentence_case("Long slender fingers"), sentence_case("EEG abnormality")
    ('long slender fingers', 'EEG abnormality')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.corpora.hpo.obo import LAYPERSON
from agentenv.envs.rare_disease.patients.simulated import Patient

Presentation = Literal["hpo", "text", "both"]
PRESENTATIONS: tuple[str, ...] = get_args(Presentation)


def sentence_case(text: str) -> str:
    """Lower-case the first letter unless the first word looks like an acronym (``EEG``)."""
    first = text.split(" ", 1)[0]
    if len(first) > 1 and first[:2].isupper():
        return text
    return text[:1].lower() + text[1:]


def join_phrases(phrases: Sequence[str], conjunction: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c`` (or ``a, b or c``)."""
    if len(phrases) <= 1:
        return "".join(phrases)
    return ", ".join(phrases[:-1]) + f" {conjunction} " + phrases[-1]


def lay_label(kb: HpoKnowledgeBase, term_id: str) -> str:
    """The lay wording of a term: its first EXACT layperson synonym, else its label."""
    for syn in kb.synonyms(term_id):
        if syn.type == LAYPERSON and syn.scope == "EXACT":
            return syn.text
    return kb.term_name(term_id)


def _check(presentation: str) -> None:
    if presentation not in PRESENTATIONS:
        raise ValueError(f"presentation must be one of {list(PRESENTATIONS)}, got {presentation!r}")


def render_terms(
    kb: HpoKnowledgeBase,
    terms: Sequence[str],
    presentation: Presentation = "hpo",
    conjunction: str = "and",
) -> str:
    """Render terms, one per line (``hpo``, ``both``) or as one phrase list (``text``).

    ``hpo``: ``- HP:0001166 Arachnodactyly``;
    ``both``: ``- HP:0001166 Arachnodactyly (long slender fingers)`` when the lay wording differs;
    ``text``: ``long slender fingers, ...``.
    """
    _check(presentation)
    if presentation == "text":
        return join_phrases([sentence_case(lay_label(kb, t)) for t in terms], conjunction)
    lines = []
    for t in terms:
        label = kb.term_name(t)
        line = f"- {t} {label}"
        if presentation == "both":
            lay = lay_label(kb, t)
            if lay.lower() != label.lower():
                line += f" ({sentence_case(lay)})"
        lines.append(line)
    return "\n".join(lines)


def render_patient(
    kb: HpoKnowledgeBase, patient: Patient, presentation: Presentation = "hpo"
) -> str:
    """The presenting picture of a patient: visible present terms, then excluded ones (never hidden)."""
    _check(presentation)
    if presentation == "text":
        parts = []
        if patient.present:
            parts.append(f"The patient presents with {render_terms(kb, patient.present, 'text')}.")
        if patient.excluded:
            parts.append(
                f"The patient does not have {render_terms(kb, patient.excluded, 'text', 'or')}."
            )
        return " ".join(parts)
    blocks = []
    if patient.present:
        blocks.append("Present phenotypes:\n" + render_terms(kb, patient.present, presentation))
    if patient.excluded:
        blocks.append("Excluded phenotypes:\n" + render_terms(kb, patient.excluded, presentation))
    return "\n\n".join(blocks)
