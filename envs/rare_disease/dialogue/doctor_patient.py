"""DiagnosisDialogue-v0: a doctor and a patient talk their way to a rare-disease diagnosis.

## Task
The cases of ``RareDiseaseDiagnosis-v0`` (same HPO knowledge base, splits,
simulated patients and sampler), as a conversation. The ``doctor`` reads the
referral (the visible presenting phenotypes and excluded ones), may use the
rare-disease tools, talks to the ``patient`` to learn the hidden findings, and
ends with an ``<answer>`` of up to ``k`` diseases.

## Agents
``doctor`` (lead; acts first) and ``patient`` (simulated side; replies once
to each message of the doctor). Scripted default patient:
:class:`~agentenv.envs.rare_disease.dialogue.scripted_patient.ScriptedPatient`;
scripted doctors: :mod:`~agentenv.envs.rare_disease.dialogue.scripted_doctor`.

## Observations
Doctor: the referral on reset, then tool output, the patient's reply, or an
error message. Patient: its private record in lay words (findings, absent
features, what the referral already said) on reset, then each message of the
doctor. ``observation_mode="transcript"`` gives each agent its whole chat.

## Actions
Doctor: ``<say>…</say>`` (a message to the patient), ``<tool_call>`` blocks
(``search_diseases``, ``get_disease``, ``lookup_phenotype``,
``phenotype_relatives``, ``rank_by_phenotypes``; no ``ask_patient``), or
``<answer>…</answer>``; ``max_turns`` (10) in all. Patient: ``<say>…</say>``.
A message may ask about at most
:data:`~agentenv.envs.rare_disease.dialogue.patient_claims.MAX_FINDINGS_PER_MESSAGE`
(20) findings; a longer one is refused with an explanation (an invalid
action, never passed on), as a person would not answer a catalogue. The
patient answers a broad term with presence and names a hidden finding only
when asked about it or its direct parent
(:mod:`~agentenv.envs.rare_disease.dialogue.patient_answers`).

## Rewards
Doctor: the rare-disease components (``accuracy`` = hit@k, ``hit@1``,
``reciprocal_rank``, ``n_predictions``, ``over_limit``, ``questions_asked`` =
findings asked about, ...) plus ``format``, ``tool_calls``, ``turns``,
``messages``, ``latency_ms`` (2 s per finding asked), weighted by ``reward``
(``tool_calls`` counts each finding asked as one call, the ``ask_patient``
call it stands for, so a question costs the same as in the single-agent env)
(``strict`` by default). Patient: 1.0 per faithful reply (every claim true
against its record, nothing asked left unanswered, no evasion, no diagnosis
named, no unasked hidden finding volunteered), else 0.0.

## Constructors (PettingZoo's names)
``env(**kwargs)``: the AEC env inside PettingZoo's ``OrderEnforcingWrapper``
(as PettingZoo's own ``env()``); ``raw_env(**kwargs)``: the bare
:class:`DiagnosisDialogueEnv` (same as ``agentenv.multiagent.make(ENV_ID)``);
``parallel_env(**kwargs)``: the turn-based Parallel version. ``kwargs``
override the registered ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from agentenv.core import Task
from agentenv.corpora.hpo.knowledge_base import UNIVERSE_PREFIXES, load_hpo_kb
from agentenv.engine.env_options import bool_option
from agentenv.engine.parsing import Answer
from agentenv.engine.tools import ToolRegistry
from agentenv.envs.rare_disease.dialogue.patient_claims import (
    MAX_FINDINGS_PER_MESSAGE,
    AskedSoFar,
    asked_terms,
    check_reply,
)
from agentenv.envs.rare_disease.dialogue.scripted_doctor import AnswerAtOnceDoctor, AskingDoctor
from agentenv.envs.rare_disease.dialogue.scripted_patient import ScriptedPatient
from agentenv.envs.rare_disease.grading.disease_names import disease_spelling_index
from agentenv.envs.rare_disease.grading.disease_twins import disease_twins
from agentenv.envs.rare_disease.grading.grade import component_names, grade_answer_text
from agentenv.envs.rare_disease.patients.disease_mix import DEFAULT_MIX
from agentenv.envs.rare_disease.patients.lay_text import PRESENTATIONS, lay_label, sentence_case
from agentenv.envs.rare_disease.patients.prompts import answer_rules, system_prompt
from agentenv.envs.rare_disease.patients.simulated import Patient, SamplerParams
from agentenv.envs.rare_disease.tasks.patient_tasks import (
    TaskSource,
    check_choice,
    check_k,
    patient_task_from_dict,
    patient_tasks,
)
from agentenv.envs.rare_disease.tools.diagnosis_tools import make_rare_disease_tools
from agentenv.envs.rare_disease.tools.documents import disease_retriever
from agentenv.multiagent.base import DialogueEnv, Judgment, SayRefused
from agentenv.multiagent.dialogue_state import Dialogue
from agentenv.multiagent.parallel import TurnBasedParallel
from agentenv.multiagent.policy_helpers import PolicyLike
from agentenv.multiagent.registry import make as _make
from agentenv.retrieval.base import Retriever
from agentenv.retrieval.env_argument import retriever_argument


@dataclass
class Visit:
    """One dialogue's state (the env's episode context): the patient and what the doctor asked so far."""

    patient: Patient
    private: dict[str, Any]
    """The patient's record, structured, for scripted patients (``info["private"]``)."""
    asked_so_far: AskedSoFar
    """Every term asked about so far (a set with its ancestor closure: linear over a dialogue)."""
    asked: tuple[str, ...] = ()
    """Terms the doctor's last message asked about."""
    stated: dict[str, str] = field(default_factory=dict)
    """Term -> the polarity the patient first stated for it (for contradictions)."""
    n_asked: int = 0


class DiagnosisDialogueEnv(DialogueEnv):
    """Doctor and patient on the rare-disease cases; see the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "human"],
        "name": "DiagnosisDialogue-v0",
        "is_parallelizable": False,
    }
    lead, other, first = "doctor", "patient", "doctor"
    item_tool_calls = 1  # a finding asked costs one tool call, as an ask_patient call does

    def __init__(
        self,
        *,
        split: str = "train",
        universe: str = "omim",
        k: int = 3,
        presentation: str = "hpo",
        sampler: str | SamplerParams | None = None,
        ranker_tool: bool = True,
        tasks: TaskSource | None = None,
        retriever: str | Retriever = "bm25",
        max_turns: int = 10,
        reward: Any = None,
        tools_in_prompt: bool = False,
        disease_mix: str = DEFAULT_MIX,
        **kwargs: Any,
    ) -> None:
        self.tools_in_prompt = bool_option("tools_in_prompt", tools_in_prompt)
        check_choice("universe", universe, tuple(UNIVERSE_PREFIXES))
        check_choice("presentation", presentation, PRESENTATIONS)
        self.kb, self.k, self.presentation = load_hpo_kb(universe), check_k(k), presentation  # type: ignore[arg-type]
        disease_spelling_index(self.kb)  # the answer grammar's names, loaded before any step
        disease_twins(self.kb)  # and the cross-catalog twins (none in the omim universe)
        served = patient_tasks(
            self.kb,
            split=split,
            presentation=presentation,
            multi_turn=True,
            sampler=sampler,
            tasks=tasks,
            disease_mix=disease_mix,
        )
        self.import_warnings = served.import_warnings
        search = retriever_argument(retriever, build=lambda spec: disease_retriever(self.kb, spec))
        tools = make_rare_disease_tools(
            self.kb, ranker_tool=ranker_tool, ask_patient=False, retriever=search
        )
        super().__init__(
            served.tasks,
            ToolRegistry(tools),
            split=served.split,
            max_turns=max_turns,
            reward=reward,
            **kwargs,
        )
        self.metadata = {
            **type(self).metadata,
            "hpo_release": self.kb.release,
            "hpo_citation": self.kb.citation,
        }

    # ------------------------------------------------------------------ hooks
    def _rules(self) -> str:
        return answer_rules(self.k, self.kb.universe, self.reward_config.over_limit)

    def _lead_system(self) -> str:
        return (
            system_prompt(self.kb, self.tools, self.max_turns, self._rules(), self.tools_in_prompt)
            + "\nThe patient is with you: talk to them with <say>…</say> (one message per turn); their "
            "reply is the next message. Ask about findings by name, with HPO ids when you have them, "
            f"e.g. <say>Do you have seizures (HP:0001250)?</say>, at most {MAX_FINDINGS_PER_MESSAGE} "
            "findings per message. Each finding asked counts as one tool call. The patient answers a "
            "broad finding with yes or no; ask about specific findings to learn which ones they have."
        )

    def _lead_opening(self, task: Task) -> str:
        return "\n\n".join(
            [
                "A patient is referred to you for a rare-disease diagnosis.",
                task.prompt,
                "The patient is here: ask them about findings with <say>…</say>.",
                self._rules(),
            ]
        )

    def _start_episode(self, task: Task) -> Visit:
        if not isinstance(task.case, Patient):
            raise ValueError("options['task'] must be a rare-disease Task (its case a Patient)")
        p: Patient = task.case
        private = {
            "present": list(p.present),
            "hidden": list(p.hidden),
            "excluded": list(p.excluded),
            "findings": list(p.findings or p.all_present),
            "closed_world": p.closed_world,
        }
        return Visit(p, private, AskedSoFar(self.kb))

    def _other_briefing(self, task: Task, context: Visit) -> str:
        p, kb = context.patient, self.kb

        def items(terms: Sequence[str]) -> str:
            return (
                "\n".join(f"- {sentence_case(lay_label(kb, t))} ({t})" for t in terms) or "- (none)"
            )

        rest = (
            "Anything not listed: you don't have it."
            if p.closed_world
            else "Anything not listed: you are not sure."
        )
        return "\n".join(
            [
                "You are a patient seeing a doctor about a possible rare disease. You do not know your "
                "diagnosis: never guess or name one.",
                "Your findings, in your own words:",
                items(p.findings or p.all_present),
                "You do not have:",
                items(p.excluded),
                rest,
                "Your referral letter already told the doctor about:",
                items(p.present),
                'Answer each question truthfully, one line per finding asked about: "Yes, I have …", '
                '"No, I don\'t have …" (or "I\'m not sure about …" when your record does not say). '
                "A finding counts as yes when you have it or a more specific form of it. Mention only what "
                "you are asked about: asked about a broad kind of finding, say yes or no without listing "
                "your specific findings under it. Reply as <say>…</say>.",
            ]
        )

    def _other_private(self, context: Visit) -> dict[str, Any]:
        return context.private

    def _heard(self, text: str, context: Visit) -> int:
        """Read the findings a message asks about; refuse one over the cap before changing anything.

        Reading stops at the first finding past the cap, so a 32 KB flood costs what a question does.
        """
        asked = asked_terms(self.kb, text, limit=MAX_FINDINGS_PER_MESSAGE + 1)
        if len(asked) > MAX_FINDINGS_PER_MESSAGE:
            raise SayRefused(
                f"the message asks about more than {MAX_FINDINGS_PER_MESSAGE} findings; the patient "
                f"answers at most {MAX_FINDINGS_PER_MESSAGE} per message (nothing was passed on): ask "
                "about the most telling ones first, and more in a later message"
            )
        context.asked = asked
        context.asked_so_far.add(asked)
        context.n_asked += len(asked)
        return len(asked)

    def _judge(self, text: str | None, context: Visit) -> Judgment:
        if text is None:
            return Judgment({"claims": 0, "unanswered": len(context.asked)})
        check = check_reply(self.kb, context.patient, text, context.asked, context.asked_so_far)
        contradictions = 0
        for claim in check.claims:
            if claim.polarity == "unsure":
                continue
            before = context.stated.setdefault(claim.term, claim.polarity)
            contradictions += before != claim.polarity
        counts = {
            "claims": len(check.claims),
            "false_claims": len(check.false_claims),
            "evasions": len(check.evasions),
            "unanswered": len(check.unanswered),
            "leaks": int(check.leak),
            "volunteered": len(check.volunteered),
            "contradictions": contradictions,
        }
        return Judgment(counts, check.claims)

    def _grade(self, task: Task, answer: Answer | None, dialogue: Dialogue) -> dict[str, float]:
        patient: Patient = task.case
        visit: Visit = dialogue.context
        return grade_answer_text(
            self.kb, patient.diagnoses, answer, self.k, visit.n_asked, dialogue
        )

    def _graded_components(self) -> frozenset[str]:
        return frozenset(component_names(self.k))

    def _task_from_dict(self, data: Mapping[str, Any]) -> Task:
        return patient_task_from_dict(self.kb, data, self.presentation)

    def default_policy(self, agent: str) -> PolicyLike:
        if agent != self.other:
            raise ValueError(f"only the {self.other} has a scripted default policy, not {agent!r}")
        return ScriptedPatient(self.kb)

    def scripted_leads(self) -> dict[str, PolicyLike]:
        return {
            "answer-at-once": AnswerAtOnceDoctor(self.k),
            "asking": AskingDoctor(self.kb, k=self.k),
        }

    def probe_policy(self, dialogue: int) -> PolicyLike:
        """The asking doctor, naming findings by id in even dialogues and by name in odd ones."""
        return AskingDoctor(self.kb, style="ids" if dialogue % 2 == 0 else "names")


ENV_ID: str = DiagnosisDialogueEnv.metadata["name"]
"""The registered id of this dialogue."""


def raw_env(**kwargs: Any) -> DiagnosisDialogueEnv:
    """The bare AEC env of ``ENV_ID`` (no wrappers): ``agentenv.multiagent.make(ENV_ID, **kwargs)``."""
    return _make(ENV_ID, **kwargs)


def env(**kwargs: Any) -> OrderEnforcingWrapper:
    """The AEC env of ``ENV_ID`` inside PettingZoo's ``OrderEnforcingWrapper``, as PettingZoo's own ``env()``."""
    return OrderEnforcingWrapper(raw_env(**kwargs))


def parallel_env(**kwargs: Any) -> TurnBasedParallel:
    """The turn-based Parallel version of ``ENV_ID`` (``info["active_agent"]`` names whose action counts)."""
    return TurnBasedParallel(raw_env(**kwargs))
