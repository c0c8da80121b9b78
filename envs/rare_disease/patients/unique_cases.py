"""A split's simulated cases, each showing a presentation that no other case of the split shows.

Why: ``Task.id`` hashes what the agent sees (the presenting and excluded
terms), never the gold, so two cases drawn with the same presentation share an
id. With different golds such a pair cannot be answered (nothing tells them
apart); with the same gold it is a duplicate; either way a ``task_id`` names two
tasks. Thinly annotated diseases do this: under the ``multi_turn`` sampler the
train split drew 195 of its 32,845 cases into 54 presentations shown more than
once (``calibrated``: 167 into 44); validation and test drew none.

The rule, deterministic and in case-list order (:func:`plan_cases`): a case
keeps its draw unless an earlier case of the split shows the same presentation
(the same present and excluded terms, order aside). Such a case is redrawn
with :func:`redraw_seed` attempts ``1..MAX_REDRAWS`` and takes the first draw
whose presentation no case of the split shows (no original draw, no earlier
redraw); if every attempt collides (a disease whose draws all show the same
few terms), the case is dropped. Redrawing rather than dropping keeps the
split's size and each disease's share of it; a case whose own draw is unique
is never touched, so the split's statistics barely move.

A plan costs one sampling of every case (~25 s for train), so it is computed
once per (HPO files, universe, sampler, split, cases per disease): the default
presets' plans ship in :mod:`~.unique_case_plans`; any other is cached under
``$AGENTENV_HOME/rare_disease/case_plans``. Until a plan is needed, nothing is
sampled: ``gym.make`` stays fast.

Example:
    >>> redraw_seed(Case("OMIM:154700", 1), 1) != redraw_seed(Case("OMIM:154700", 1), 2)
    True
    >>> presentation_key(Patient("OMIM:1", present=("HP:2", "HP:1")))
    (('HP:1', 'HP:2'), ())
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.patients.disease_mix import MixedCaseList
from agentenv.envs.rare_disease.patients.simulated import (
    Patient,
    PatientSampler,
    patients_fingerprint,
)
from agentenv.envs.rare_disease.patients.splits import SPLIT_SALT, Case, CaseList
from agentenv.envs.rare_disease.patients.unique_case_plans import PUBLISHED_PLANS
from agentenv.storage.checksummed_cache import unpack, write_pack
from agentenv.storage.paths import cache_dir
from agentenv.storage.progress import build_step

PLAN_FORMAT = 1
"""Bump when the rule changes: every cached plan is recomputed, and the shipped ones must be."""
MAX_REDRAWS = 20
"""Attempts before a colliding case is dropped. Why 20: the 24 cases it drops from the default
presets' train split belong to 8 diseases annotated with one phenotype, whose draws show a few
presentations that other diseases already show; 100 attempts would serve only 3 of them."""

PresentationKey = tuple[tuple[str, ...], tuple[str, ...]]


@dataclass(frozen=True)
class CasePlan:
    """How a split's case list becomes its served cases: which are redrawn, which dropped."""

    redrawn: Mapping[int, int]
    """Case index -> the redraw attempt it serves (its seed: :func:`redraw_seed`)."""
    dropped: tuple[int, ...] = ()
    """Case indices not served, ascending."""

    def to_json(self) -> dict[str, list[list[int]] | list[int]]:
        return {
            "redrawn": sorted([i, a] for i, a in self.redrawn.items()),
            "dropped": list(self.dropped),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, list]) -> CasePlan:
        return cls(
            {int(i): int(a) for i, a in data["redrawn"]}, tuple(int(i) for i in data["dropped"])
        )


def presentation_key(patient: Patient) -> PresentationKey:
    """What a case shows the agent, order aside: the Task id is a function of it."""
    return tuple(sorted(patient.present)), tuple(sorted(patient.excluded))


def redraw_seed(case: Case, attempt: int) -> int:
    """The patient seed of a case's ``attempt``-th redraw: stable, and apart from every case seed."""
    digest = hashlib.sha256(
        f"{SPLIT_SALT}:redraw:{case.disease_id}:{case.seed}:{attempt}".encode()
    ).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


def plan_cases(sampler: PatientSampler, cases: Sequence[Case]) -> CasePlan:
    """The plan of ``cases`` under the rule of the module docstring (samples every case once)."""
    keys = [presentation_key(sampler.sample_case(*case)) for case in cases]
    taken = set(keys)  # a redraw avoids every original draw, so no unique case is ever displaced
    claimed: set[PresentationKey] = set()
    redrawn: dict[int, int] = {}
    dropped: list[int] = []
    for i, (case, key) in enumerate(zip(cases, keys, strict=True)):
        if key not in claimed:
            claimed.add(key)
            continue
        for attempt in range(1, MAX_REDRAWS + 1):
            new = presentation_key(sampler.sample_case(case.disease_id, redraw_seed(case, attempt)))
            if new not in taken:
                taken.add(new)
                redrawn[i] = attempt
                break
        else:
            dropped.append(i)
    return CasePlan(redrawn, tuple(dropped))


def plan_key(
    kb: HpoKnowledgeBase,
    sampler: PatientSampler,
    split: str,
    cases_per_disease: int,
    disease_mix: str = "uniform",
) -> str:
    """What decides a plan: the rule, the HPO files, the universe's diseases, the sampler, the split, the mix."""
    parts = [
        PLAN_FORMAT,
        MAX_REDRAWS,
        kb.checksum,
        patients_fingerprint(kb, sampler.params, disease_mix),
        split,
        cases_per_disease,
    ]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:24]


_PLANS: dict[str, CasePlan] = {}
"""This process's plans by :func:`plan_key` (a few small dicts)."""


def case_plan(
    kb: HpoKnowledgeBase, sampler: PatientSampler, split: str, cases: CaseList | MixedCaseList
) -> CasePlan:
    """The plan of a split's cases: shipped, cached in this process or on disk, else computed and cached."""
    key = plan_key(kb, sampler, split, cases.cases_per_disease, cases.mix)
    plan = _PLANS.get(key)
    if plan is None:
        shipped = PUBLISHED_PLANS.get(key)
        plan = (
            CasePlan.from_json(shipped)
            if shipped is not None
            else _cached_plan(key, sampler, split, cases)
        )
        _PLANS[key] = plan
    return plan


def _cached_plan(
    key: str, sampler: PatientSampler, split: str, cases: CaseList | MixedCaseList
) -> CasePlan:
    path = cache_dir("rare_disease", "case_plans") / f"{key}.json"
    header = {"format": PLAN_FORMAT, "key": key}
    body = unpack(path, header)
    if body is not None:
        return CasePlan.from_json(body)
    with build_step(
        f"checking the {len(cases):,} cases of the {split} split for repeated presentations"
    ):
        plan = plan_cases(sampler, cases)
    write_pack(path, header, plan.to_json())
    return plan


class UniqueCases(Sequence[Case]):
    """The served cases of a split: its case list with the plan's redraws in place and drops left out.

    The plan is looked up on the first ``len`` or item, not before; truthiness
    needs none (a non-empty list keeps its first case).
    """

    def __init__(self, cases: Sequence[Case], plan: Callable[[], CasePlan]) -> None:
        self._cases, self._plan_of = cases, plan

    @cached_property
    def plan(self) -> CasePlan:
        return self._plan_of()

    def __bool__(self) -> bool:
        return len(self._cases) > 0

    def __len__(self) -> int:
        return len(self._cases) - len(self.plan.dropped)

    def __getitem__(self, index: int) -> Case:  # type: ignore[override]
        size = len(self)
        if not isinstance(index, int) or not -size <= index < size:
            raise IndexError(f"case index {index!r} out of range for {size} cases")
        position = self.position(index % size)
        case = self._cases[position]
        attempt = self.plan.redrawn.get(position)
        return case if attempt is None else Case(case.disease_id, redraw_seed(case, attempt))

    def position(self, index: int) -> int:
        """The case-list position of served case ``index`` (the drops before it skipped)."""
        for dropped in self.plan.dropped:  # ascending, and few
            if dropped > index:
                break
            index += 1
        return index


def unique_cases(
    kb: HpoKnowledgeBase, sampler: PatientSampler, split: str, cases: CaseList | MixedCaseList
) -> UniqueCases:
    """The served cases of ``split`` (see the module docstring); the plan is resolved on first use."""
    return UniqueCases(cases, lambda: case_plan(kb, sampler, split, cases))
