"""Which patients a rare-disease env serves: a split's simulated patients, or the user's own, as Tasks.

Why apart from the env: the single-agent env and the doctor-patient dialogue
serve the same cases, so both build them here from the shared KB, and the
dialogue needs no single-agent env to borrow them from.

* ``tasks=None``: the split's diseases (:func:`~.splits.case_list`), one
  simulated patient per case, drawn by :class:`~.patients.PatientSampler`
  with a sampler preset (``multi_turn``: findings hidden until asked about;
  ``calibrated``: none hidden, for single-turn) or explicit params;
* ``tasks=`` a JSONL file, a phenopacket folder or a list of dicts/patients
  (:func:`~.user_patients.load_user_patients`): split ``custom``, with the
  import's warnings kept and shown once.

Patients are sampled and rendered on first access, so ``gym.make`` stays fast.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentenv.core import Task
from agentenv.corpora.hpo import HpoKnowledgeBase
from agentenv.envs.rare_disease.patient_prompts import patient_task
from agentenv.envs.rare_disease.patients import PRESETS, Patient, PatientSampler, SamplerParams
from agentenv.envs.rare_disease.splits import SPLITS, case_list
from agentenv.envs.rare_disease.user_patients import load_user_patients, warn_import
from agentenv.errors import UserInputError

TaskSource = str | Path | Sequence[Mapping[str, Any] | Patient]
"""What ``tasks=`` accepts: a file or folder path, or task dicts / patients."""


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


@dataclass(frozen=True)
class PatientTaskSet:
    """The tasks of one env and where they came from."""

    tasks: PatientTasks
    split: str
    """The split name, or ``custom`` for the user's patients."""
    sampler_params: SamplerParams | None
    """The simulated patients' sampler (None for the user's patients)."""
    import_warnings: tuple[str, ...] = ()
    import_skipped: Mapping[str, int] = field(default_factory=dict)


def patient_tasks(
    kb: HpoKnowledgeBase,
    *,
    split: str,
    presentation: str,
    multi_turn: bool,
    sampler: str | SamplerParams | None = None,
    tasks: TaskSource | None = None,
) -> PatientTaskSet:
    """The patients of ``split`` (or of ``tasks``), as lazily built Tasks (see the module docstring)."""
    if tasks is None:
        check_choice("split", split, SPLITS)
        params = sampler_params(sampler, multi_turn)
        patients = PatientSampler(kb, params)
        cases = case_list(kb, split)  # type: ignore[arg-type]  # seeds hashed on access
        task_set = PatientTasks(
            len(cases), lambda i: patients.sample_case(*cases[i]), lambda p: patient_task(kb, p, presentation, split)
        )
        return PatientTaskSet(task_set, split, params)
    if sampler is not None:
        raise ValueError("sampler applies to simulated patients only; drop it when passing tasks=")
    result = load_user_patients(kb, tasks)
    warn_import(result.warnings, stacklevel=4)  # each at the user's file:line; all kept in env.import_warnings
    if not result.patients:
        raise UserInputError(
            f"tasks: no usable patient (skipped: {dict(result.skipped) or 'none'}); "
            + ("; ".join(result.warnings[:3]) or "the input holds no case")
        )
    imported = result.patients
    task_set = PatientTasks(len(imported), imported.__getitem__, lambda p: patient_task(kb, p, presentation, "custom"))
    return PatientTaskSet(task_set, "custom", None, tuple(result.warnings), dict(result.skipped))


def patient_task_from_dict(kb: HpoKnowledgeBase, data: Mapping[str, Any], presentation: str) -> Task:
    """The Task of one user task dict (``options={"task": {...}}``); a skipped one says why."""
    result = load_user_patients(kb, [data])
    if not result.patients:
        raise ValueError(f"options['task'] was skipped: {'; '.join(result.warnings)}")
    return patient_task(kb, result.patients[0], presentation, "custom")


def check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    """``value`` if it is one of ``choices``, else a ``ValueError`` listing them."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


def check_k(k: Any) -> int:
    """The number of diagnoses an answer may list: an int in 1..20."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 20:
        raise ValueError(f"k must be an int in 1..20 (the number of diagnoses allowed), got {k!r}")
    return k


def sampler_params(sampler: str | SamplerParams | None, multi_turn: bool) -> SamplerParams:
    """The sampler preset or params; single-turn refuses hidden findings (nothing could reveal them)."""
    if sampler is None:
        return PRESETS["multi_turn" if multi_turn else "calibrated"]
    if isinstance(sampler, str):
        params = PRESETS.get(sampler)
        if params is None:
            raise ValueError(f"sampler must be one of {sorted(PRESETS)} or a SamplerParams, got {sampler!r}")
    elif isinstance(sampler, SamplerParams):
        params = sampler
    else:
        raise ValueError(f"sampler must be a preset name or a SamplerParams, not {type(sampler).__name__}")
    if not multi_turn and params.hidden_fraction > 0:
        raise ValueError(
            f"sampler hides findings (hidden_fraction={params.hidden_fraction}) but single_turn mode has no "
            "ask_patient to reveal them; use sampler='calibrated' or mode='multi_turn'"
        )
    return params
