"""The default simulated patient of ``DiagnosisDialogue-v0``: truthful, canonical, checkable.

Why scripted: a dialogue env needs a simulated side that is cheap,
deterministic and *provably* truthful, so that a learned doctor is measured
against the task and not against simulator noise, and so that an LLM patient
can be compared with it (``agentenv simulator-check``).

:class:`ScriptedPatient` answers with the single-agent ``ask_patient`` logic
itself (:func:`agentenv.envs.rare_disease.dialogue.patient_answers.ask`), so the two envs can
never disagree about a patient. Replies are one line per finding asked about
(:func:`~agentenv.envs.rare_disease.dialogue.patient_claims.asked_terms`, at most
:data:`~agentenv.envs.rare_disease.dialogue.patient_claims.MAX_FINDINGS_PER_MESSAGE`):
``Yes, I have <lay label> (<id>)[, in particular <finding> (<id>) …].``,
``No, I don't have <lay label> (<id>).`` or ``I'm not sure about <lay label>
(<id>).`` It reads the doctor's last message from ``info["messages"]`` and its
record from ``info["private"]``: a pure function of ``(observation, info)``.

The reply is bounded: at most ``MAX_FINDINGS_PER_MESSAGE`` lines, and each
detail ("in particular …") is named once per reply, at most
:data:`MAX_DETAILS_PER_REPLY` in all. With HPO's longest lay label (120
characters) that is under 9 KB, far inside the patient's own 32 KB action
limit; an unbounded reply to a 157-term flood (146-182 KB) was refused by
that limit and scored the patient 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.dialogue.patient_answers import AskAnswer, ask
from agentenv.envs.rare_disease.dialogue.patient_claims import MAX_FINDINGS_PER_MESSAGE, asked_terms
from agentenv.envs.rare_disease.patients.lay_text import join_phrases, lay_label, sentence_case
from agentenv.envs.rare_disease.patients.simulated import Patient
from agentenv.multiagent.policy_helpers import last_heard, say

NOT_UNDERSTOOD_PATIENT = (
    "I'm not sure what you are asking about. Could you ask me about a specific symptom?"
)
MAX_DETAILS_PER_REPLY = 40
"""Details ("in particular …") one reply names at most, each once: a record with hundreds of
findings (an imported one) still gets a reply of bounded size. Simulated records never reach it."""


def patient_of(private: Mapping[str, Any]) -> Patient:
    """The record in ``info["private"]`` as a :class:`Patient` (the diagnosis is not part of it)."""
    return Patient(
        disease_id="",
        present=tuple(private["present"]),
        hidden=tuple(private["hidden"]),
        excluded=tuple(private["excluded"]),
        findings=tuple(private["findings"]),
        closed_world=bool(private["closed_world"]),
    )


def spoken(kb: HpoKnowledgeBase, term: str) -> str:
    """How the patient names a term: its lay wording and, for checkability, its id."""
    return f"{sentence_case(lay_label(kb, term))} ({term})"


def answer_line(
    kb: HpoKnowledgeBase, reply: AskAnswer, details_named: dict[str, None] | None = None
) -> str:
    """One canonical line for one :class:`~agentenv.envs.rare_disease.dialogue.patient_answers.AskAnswer`.

    ``details_named``: the details earlier lines of the same reply named; updated, and no detail is
    named twice or past :data:`MAX_DETAILS_PER_REPLY`.
    """
    named = spoken(kb, reply.term_id)
    if reply.answer == "yes":
        said = {} if details_named is None else details_named
        fresh = [t for t in reply.revealed if t != reply.term_id and t not in said]
        fresh = fresh[: max(0, MAX_DETAILS_PER_REPLY - len(said))]
        said.update(dict.fromkeys(fresh))
        details = [spoken(kb, t) for t in fresh]
        more = f", in particular {join_phrases(details)}" if details else ""
        return f"Yes, I have {named}{more}."
    if reply.answer == "no":
        return f"No, I don't have {named}."
    return f"I'm not sure about {named}."


class ScriptedPatient:
    """The default patient: ``ask`` on its record, one canonical line per finding asked about."""

    name = "scripted-patient"

    def __init__(self, kb: HpoKnowledgeBase) -> None:
        self.kb = kb

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        patient = patient_of(info["private"])
        terms = asked_terms(self.kb, last_heard(obs, info), limit=MAX_FINDINGS_PER_MESSAGE)
        if not terms:
            return say(NOT_UNDERSTOOD_PATIENT)
        details: dict[str, None] = {}
        return say(
            "\n".join(answer_line(self.kb, ask(self.kb, patient, t), details) for t in terms)
        )
