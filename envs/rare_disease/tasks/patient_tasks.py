"""Which patients a rare-disease env serves: a split's simulated patients, or the user's own, as Tasks.

Why apart from the env: the single-agent env and the doctor-patient dialogue
serve the same cases, so both build them here from the shared KB, and the
dialogue needs no single-agent env to borrow them from.

* ``tasks=None``: the split's cases, drawn from its diseases by the disease
  mix (:mod:`~.disease_mix`: ``published`` by default, ``uniform``), one
  simulated patient per case, drawn by :class:`~.patients.PatientSampler`
  with a sampler preset (``multi_turn``: findings hidden until asked about;
  ``calibrated``: none hidden, for single-turn) or explicit params; a case
  whose presentation an earlier case of the split already shows is redrawn
  or dropped (:mod:`~.unique_cases`), so that every task id names one task;
* ``tasks=`` a JSONL file, a phenopacket folder or a list of dicts/patients
  (:func:`~.user_patients.load_user_patients`): split ``custom``, with the
  import's warnings kept and shown once. Two cases with the same presentation
  (present and excluded terms, order aside) fail the load, naming both: their
  task ids would be equal, and no answer could tell them apart;
* ``split="real"``: the shipped published patients (:mod:`~.real_cases`).

Real and imported records go through the simulated patients' presentation
(:mod:`~.presentation`): a seeded share hidden in multi-turn mode, the patient
answering from the full record in an open world. A file's presentations are
planned together at load (:mod:`~.presentation_plan`), so a file that loads
serves every task: no record is left showing what another shows.

Patients are sampled and rendered on first access, so ``gym.make`` stays fast.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from agentenv.core import Task
from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.patients.disease_mix import (
    DEFAULT_MIX,
    DISEASE_MIXES,
    mixed_case_list,
)
from agentenv.envs.rare_disease.patients.presentation_plan import plan_presentations
from agentenv.envs.rare_disease.patients.prompts import patient_task
from agentenv.envs.rare_disease.patients.simulated import (
    PRESETS,
    Patient,
    PatientSampler,
    SamplerParams,
    patients_fingerprint,
)
from agentenv.envs.rare_disease.patients.splits import SPLITS
from agentenv.envs.rare_disease.patients.unique_cases import presentation_key, unique_cases
from agentenv.envs.rare_disease.tasks.real_cases import REAL_CASES_SHA256, real_split_patients
from agentenv.envs.rare_disease.tasks.user_patients import load_user_patients, warn_import
from agentenv.errors import UserInputError

TaskSource = str | Path | Sequence[Mapping[str, Any] | Patient]
"""What ``tasks=`` accepts: a file or folder path, or task dicts / patients."""

REAL_SPLIT = "real"
"""The split of the shipped published patients (:mod:`~.real_cases`)."""
SERVED_SPLITS: tuple[str, ...] = (*SPLITS, REAL_SPLIT)
"""Every split an env serves without ``tasks=``."""


S = TypeVar("S")


class PatientTasks(Sequence[Task], Generic[S]):
    """Patients viewed as Tasks, built on first access so that ``gym.make`` stays fast.

    ``sources`` are what a patient is made from (cases, or imported patients);
    ``patient`` makes it. Two built tasks with one id raise at once: the
    presentations were meant to be distinct (a stale case plan, say), and a
    ``task_id`` naming two tasks would grade one against the other's gold.
    """

    def __init__(
        self, sources: Sequence[S], patient: Callable[[S], Patient], task: Callable[[Patient], Task]
    ) -> None:
        self._sources, self._patient, self._task = sources, patient, task
        self._cache: dict[int, Task] = {}
        self._built: dict[str, int] = {}
        self.index_key: str | None = None
        """What decides these tasks, for the on-disk task-id index (set for a shared task set)."""

    def __bool__(self) -> bool:
        return bool(self._sources)

    def __len__(self) -> int:
        return len(self._sources)

    def __getitem__(self, index: int) -> Task:  # type: ignore[override]
        n = len(self._sources)
        if not isinstance(index, int) or not -n <= index < n:
            raise IndexError(f"task index {index!r} out of range for {n} tasks")
        index %= n
        task = self._cache.get(index)
        if task is None:
            task = self._task(self._patient(self._sources[index]))
            other = self._built.setdefault(task.id, index)
            if other != index:
                raise RuntimeError(
                    f"tasks {other} and {index} of split {task.split!r} share the id {task.id} (the same "
                    "presentation); the split's case plan is stale: recompute it (envs/rare_disease/patients/unique_cases.py)"
                )
            self._cache[index] = task
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
    disease_mix: str = DEFAULT_MIX,
) -> PatientTaskSet:
    """The patients of ``split`` (or of ``tasks``), as lazily built Tasks (see the module docstring).

    ``disease_mix`` picks the simulated splits' golds (:mod:`~.disease_mix`). Real and imported
    records are presented by the simulated patients' protocol (:mod:`~.presentation`): in
    multi-turn mode the default sampler's share of findings is hidden, at least its
    ``min_visible`` presented.
    """
    check_choice("disease_mix", disease_mix, DISEASE_MIXES)
    if tasks is None and split != REAL_SPLIT:
        check_choice("split", split, SERVED_SPLITS)
        params = sampler_params(sampler, multi_turn)

        def simulated() -> PatientTasks:
            patients = PatientSampler(kb, params)
            cases = unique_cases(kb, patients, split, mixed_case_list(kb, split, disease_mix))  # type: ignore[arg-type]  # lazy
            return PatientTasks(
                cases,
                lambda case: patients.sample_case(*case),
                lambda p: patient_task(kb, p, presentation, split),
            )

        shared = _shared_task_set(kb, (split, presentation, params, disease_mix), simulated)
        return PatientTaskSet(shared, split, params)
    if sampler is not None:
        raise ValueError(
            "sampler applies to simulated patients only; drop it when passing tasks= or split='real'"
        )
    if tasks is None:  # the real split: shipped, already checked
        real = _shared_task_set(
            kb,
            (REAL_SPLIT, presentation, multi_turn),
            lambda: _records(kb, real_split_patients(kb), REAL_SPLIT, presentation, multi_turn),
        )
        return PatientTaskSet(real, REAL_SPLIT, None)
    result = load_user_patients(kb, tasks)
    warn_import(
        result.warnings, stacklevel=4
    )  # each at the user's file:line; all kept in env.import_warnings
    if not result.patients:
        raise UserInputError(
            f"tasks: no usable patient (skipped: {dict(result.skipped) or 'none'}); "
            + ("; ".join(result.warnings[:3]) or "the input holds no case")
        )
    imported = result.patients
    check_distinct_presentations(imported)
    served = _records(kb, imported, "custom", presentation, multi_turn)
    return PatientTaskSet(served, "custom", None, tuple(result.warnings), dict(result.skipped))


_SHARED_SETS: weakref.WeakKeyDictionary[HpoKnowledgeBase, dict[tuple[Any, ...], PatientTasks]] = (
    weakref.WeakKeyDictionary()
)
"""The task sets already made over each KB, per split, presentation, sampler and disease mix."""


def _shared_task_set(
    kb: HpoKnowledgeBase, key: tuple[Any, ...], build: Callable[[], PatientTasks]
) -> PatientTasks:
    """The task set of ``key`` over ``kb`` that every env of the process shares, built once.

    Why: each env made its own, so its first reset resolved the split's case plan again (about
    5 ms) and each task it met was sampled and rendered again (about 2 ms), and a server's pool
    hands any task to any of its envs. A built Task is reused by every episode of an env
    already, so one per case and process serves every env whose ``key`` (split, presentation,
    sampler and disease mix; presentation and mode for the real split) decides the same tasks.
    A user's ``tasks=`` never come here.

    Example:
        >>> from agentenv.corpora.hpo.knowledge_base import load_hpo_kb
        >>> kb = load_hpo_kb("omim")
        >>> one = patient_tasks(kb, split="test", presentation="hpo", multi_turn=True)
        >>> two = patient_tasks(kb, split="test", presentation="hpo", multi_turn=True)
        >>> one.tasks is two.tasks, one.tasks is patient_tasks(kb, split="test", presentation="hpo", multi_turn=False).tasks
        (True, False)
    """
    shared = _SHARED_SETS.setdefault(kb, {})
    task_set = shared.get(key)
    if task_set is None:
        task_set = shared[key] = build()
        # What decides these tasks, for the on-disk task-id index (agentenv.engine.task_index):
        # the KB's files and the key (its parts' reprs are their field values).
        task_set.index_key = f"rare_disease|{kb.checksum}|{key!r}"
    return task_set


def _records(
    kb: HpoKnowledgeBase,
    records: Sequence[Patient],
    split: str,
    presentation: str,
    multi_turn: bool,
) -> PatientTasks:
    """Recorded cases presented by the one protocol, as Tasks of ``split``."""
    protocol = sampler_params(None, multi_turn)
    shown = plan_presentations(records, protocol.hidden_fraction, protocol.min_visible)
    return PatientTasks(shown, lambda p: p, lambda p: patient_task(kb, p, presentation, split))


def patient_checksums(
    kb: HpoKnowledgeBase, served: PatientTaskSet, disease_mix: str
) -> dict[str, str]:
    """``corpus_checksums`` of an env: the HPO files, and which patients (simulated or real) it serves.

    Why: the leaderboard refuses to rank runs whose checksums differ, so runs on another sampler,
    disease mix or on the real cases are never ranked beside the default simulated ones.
    """
    out = {"hpo": kb.checksum}
    if served.sampler_params is not None:
        out["patients"] = patients_fingerprint(kb, served.sampler_params, disease_mix)
    elif served.split == REAL_SPLIT:
        out["patients"] = REAL_CASES_SHA256
    return out


def check_distinct_presentations(patients: Sequence[Patient]) -> None:
    """Refuse imported cases that show the same presentation, naming them (why: module docstring).

    Raises:
        UserInputError: naming up to five groups by their source (``file:line``) and saying
            whether their diagnoses differ (unanswerable) or agree (a duplicate).
    """
    groups: dict[Any, list[int]] = {}
    for i, p in enumerate(patients):
        groups.setdefault(presentation_key(p), []).append(i)
    repeated = [g for g in groups.values() if len(g) > 1]
    if not repeated:
        return
    lines = []
    for group in repeated[:5]:
        golds = {frozenset(patients[i].diagnoses) for i in group}
        why = (
            "different diagnoses, so no answer can be right for all"
            if len(golds) > 1
            else "the same diagnosis"
        )
        lines.append(" and ".join(f"case {i} ({patients[i].source})" for i in group) + f" ({why})")
    more = f"; and {len(repeated) - 5} more groups" if len(repeated) > 5 else ""
    raise UserInputError(
        "tasks: cases with the same phenotypes and excluded terms would share a task id: "
        + "; ".join(lines)
        + more
        + ". Keep one case of each group, or list every accepted diagnosis in one case"
    )


def patient_task_from_dict(
    kb: HpoKnowledgeBase, data: Mapping[str, Any], presentation: str
) -> Task:
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
            raise ValueError(
                f"sampler must be one of {sorted(PRESETS)} or a SamplerParams, got {sampler!r}"
            )
    elif isinstance(sampler, SamplerParams):
        params = sampler
    else:
        raise ValueError(
            f"sampler must be a preset name or a SamplerParams, not {type(sampler).__name__}"
        )
    if not multi_turn and params.hidden_fraction > 0:
        raise ValueError(
            f"sampler hides findings (hidden_fraction={params.hidden_fraction}) but single_turn mode has no "
            "ask_patient to reveal them; use sampler='calibrated' or mode='multi_turn'"
        )
    return params
