"""How a patient answers "do you have <finding>?": presence for a broad term, details only up close.

Why this rule: a person asked "any problems with your skeleton?" says yes; they
do not recite every finding a radiologist could name under it. A patient who did
would pay a policy that knows nothing about the case to sweep the ontology's
broad terms: under the old rule, asking about the 157 terms one level below the
organ systems revealed 99.4% of the hidden findings. So:

* **Presence.** The answer is "yes" when the patient has the asked term or
  anything more specific; "no" when the term or a more general one was
  reported absent, or (a simulated, closed-world patient) when no finding lies
  at or below it; otherwise "unknown".
* **Details.** A "yes" discloses the patient's unreported findings that are the
  asked term itself or one of its *direct* children (``is_a`` one step down),
  and nothing deeper. A term too general to be a finding (the root,
  'Phenotypic abnormality', an organ-system root) discloses nothing. A
  specific finding is therefore learned by asking about it, or about its
  direct parent, as a doctor narrows a history down.

Both the single-agent ``ask_patient`` tool and the dialogue's scripted patient
and reply checker answer through :func:`ask`, so the envs cannot disagree
about a patient. :func:`ask` reads a per-patient index built once (findings
under each ancestor, excluded terms), so a question costs a few dictionary
look-ups whatever the record's size: a flood of questions stays linear.

Example (not run: it needs the KB):

    ask(kb, marfan_patient, "HP:0000478").revealed   # () : Abnormality of the eye, an organ-system root
    ask(kb, marfan_patient, "HP:0001083").revealed   # ('HP:0001083',) : ectopia lentis, asked about
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase

if TYPE_CHECKING:
    from agentenv.envs.rare_disease.patient import Patient


@dataclass(frozen=True)
class AskAnswer:
    """The answer to "does the patient have <term>?".

    ``revealed`` holds the findings the answer discloses: unreported (hidden or
    imprecisely reported) findings that are the asked term or one of its direct
    children. A broader question is answered with presence alone, and a term
    too general to be a finding (root, HP:0000118, organ-system roots) reveals
    nothing.
    """

    answer: Literal["yes", "no", "unknown"]
    term_id: str
    revealed: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Record:
    """One patient's record, indexed for constant-time questions."""

    under: dict[int, tuple[str, ...]]
    """Term index -> the findings at or below it, in record order."""
    parents: dict[str, frozenset[int]]
    """Finding -> its direct parents' indices."""
    visible: frozenset[str]
    excluded: frozenset[int]


@lru_cache(maxsize=1024)
def _record(
    kb: HpoKnowledgeBase,
    findings: tuple[str, ...],
    present: tuple[str, ...],
    excluded: tuple[str, ...],
) -> _Record:
    index, graph = kb.graph.index, kb.graph
    under: dict[int, list[str]] = {}
    parents: dict[str, frozenset[int]] = {}
    for f in dict.fromkeys(findings):
        i = index.get(f)
        if i is None:  # an imported term this HPO release lacks: it cannot be asked about
            continue
        parents[f] = frozenset(graph.parents(i).tolist())
        for a in graph.ancestors(i).tolist():
            under.setdefault(a, []).append(f)
    return _Record(
        under={a: tuple(fs) for a, fs in under.items()},
        parents=parents,
        visible=frozenset(present),
        excluded=frozenset(index[e] for e in excluded if e in index),
    )


def ask(kb: HpoKnowledgeBase, patient: Patient, hpo_id: str) -> AskAnswer:
    """Answer a yes/no question about one HPO term, as the patient would (see the module docstring).

    Raises:
        ValueError: an id the KB cannot resolve, naming it.
    """
    term = kb.resolve_term(hpo_id)
    if term is None:
        raise ValueError(f"unknown or obsolete HPO term {hpo_id!r}")
    q = kb.graph.index[term]
    record = _record(kb, patient.findings or patient.all_present, patient.present, patient.excluded)
    below = record.under.get(q)
    if below:
        if kb.too_general[q]:
            return AskAnswer("yes", term)
        revealed = tuple(
            f for f in below if f not in record.visible and (f == term or q in record.parents[f])
        )
        return AskAnswer("yes", term, revealed)
    if not record.excluded.isdisjoint(kb.graph.ancestors(q).tolist()):
        return AskAnswer("no", term)
    return AskAnswer("no" if patient.closed_world else "unknown", term)
