"""A split never serves two simulated cases with one presentation, and imported ones are refused.

The rule itself is checked on a stub sampler (fast); the shipped plans of the
default samplers are recomputed from every train case under ``slow``.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import gymnasium as gym
import pytest

import agentenv.envs.rare_disease.patients.unique_cases as unique
from agentenv.core import Task
from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.patients.disease_mix import mixed_case_list
from agentenv.envs.rare_disease.patients.simulated import PRESETS, Patient, PatientSampler
from agentenv.envs.rare_disease.patients.splits import SPLITS, Case, case_list
from agentenv.envs.rare_disease.patients.unique_case_plans import PUBLISHED_PLANS
from agentenv.envs.rare_disease.patients.unique_cases import (
    MAX_REDRAWS,
    CasePlan,
    UniqueCases,
    case_plan,
    plan_cases,
    plan_key,
    presentation_key,
    redraw_seed,
)
from agentenv.envs.rare_disease.tasks.patient_tasks import PatientTasks
from agentenv.errors import UserInputError
from agentenv.storage.paths import home_at

DEFAULT_PRESETS = ("multi_turn", "calibrated")
"""The samplers the registered ids use unless told otherwise: their plans ship."""


class StubSampler:
    """Patients from a table of ``(disease, seed) -> present terms``; a seed not in it shows the disease's default."""

    def __init__(
        self, table: dict[tuple[str, int], tuple[str, ...]], default: dict[str, tuple[str, ...]]
    ) -> None:
        self.table, self.default = table, default

    def sample_case(self, disease_id: str, seed: int) -> Patient:
        return Patient(
            disease_id, present=self.table.get((disease_id, seed), self.default[disease_id])
        )


CASES = (Case("A", 0), Case("B", 1), Case("A", 2), Case("C", 3))


def stub() -> StubSampler:
    """B's draw repeats A's; its first two redraws repeat A's and C's; A's second case can only repeat."""
    table = {
        ("B", 1): ("x",),
        ("B", redraw_seed(CASES[1], 1)): ("x",),
        ("B", redraw_seed(CASES[1], 2)): (
            "y",
        ),  # C's own draw, later in the list: not taken from it
        ("B", redraw_seed(CASES[1], 3)): ("z",),
    }
    return StubSampler(table, {"A": ("x",), "B": ("w",), "C": ("y",)})


def test_a_repeated_presentation_is_redrawn_else_dropped_and_unique_cases_are_untouched() -> None:
    plan = plan_cases(stub(), CASES)  # type: ignore[arg-type]
    assert plan == CasePlan({1: 3}, (2,))
    served = UniqueCases(CASES, lambda: plan)
    assert list(served) == [CASES[0], Case("B", redraw_seed(CASES[1], 3)), CASES[3]]
    assert [presentation_key(stub().sample_case(*c)) for c in served] == [
        (("x",), ()),
        (("z",), ()),
        (("y",), ()),
    ]
    with pytest.raises(IndexError):
        served[3]


def test_order_of_terms_does_not_make_a_presentation_new() -> None:
    sampler = StubSampler({}, {"A": ("p", "q"), "B": ("q", "p")})
    assert plan_cases(sampler, (Case("A", 0), Case("B", 0))) == CasePlan({}, (1,))  # type: ignore[arg-type]


def test_the_plan_is_looked_up_on_first_use_only() -> None:
    calls = []
    served = UniqueCases(CASES, lambda: calls.append(1) or CasePlan({}, (0,)))  # type: ignore[func-returns-value]
    assert served and not calls  # ToolEnv's emptiness check at gym.make costs no plan
    assert len(served) == 3 and served[0] == CASES[1] and calls == [1]


def test_the_default_samplers_plans_ship(kb: HpoKnowledgeBase) -> None:
    for preset in DEFAULT_PRESETS:
        sampler = PatientSampler(kb, PRESETS[preset])
        for split in SPLITS:
            cases = mixed_case_list(kb, split)
            key = plan_key(kb, sampler, split, cases.cases_per_disease, cases.mix)
            assert key in PUBLISHED_PLANS, (
                f"no shipped plan for {preset} {split}: run this file's slow test"
            )


def test_split_sizes_after_the_plans() -> None:
    """The env page's Splits table: under the published disease mix no case is dropped (a few train cases
    are redrawn); the uniform mix drops 24 train cases of 8 one-phenotype diseases."""
    for env_id in ("RareDiseaseDiagnosis-v0", "RareDiseaseDiagnosis-SingleTurn-v0"):
        sizes = {s: len(gym.make(env_id, split=s).unwrapped.tasks) for s in SPLITS}
        assert sizes == {"train": 32_845, "validation": 815, "test": 786}


def test_other_samplers_plans_are_computed_once_and_cached_on_disk(
    kb: HpoKnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sampler = PatientSampler(kb, PRESETS["noisy"])
    cases = case_list(kb, "test")
    monkeypatch.setattr(unique, "_PLANS", {})
    with home_at(tmp_path):
        plan = case_plan(kb, sampler, "test", cases)
        assert plan.redrawn and list((tmp_path / "rare_disease" / "case_plans").glob("*.json"))
        monkeypatch.setattr(unique, "_PLANS", {})
        monkeypatch.setattr(
            unique, "plan_cases", lambda *_: pytest.fail("the cached plan was not used")
        )
        assert case_plan(kb, sampler, "test", cases) == plan


def test_two_built_tasks_with_one_id_raise() -> None:
    patient = Patient("OMIM:1", present=("HP:0001250",))
    tasks = PatientTasks(
        [patient, patient], lambda p: p, lambda p: Task(prompt=" ".join(p.present), gold=None)
    )
    assert tasks[0].id
    with pytest.raises(RuntimeError, match="tasks 0 and 1 .* share the id"):
        tasks[1]


def test_imported_cases_with_one_presentation_fail_naming_both_rows(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    rows = [
        {"phenotypes": ["HP:0001250", "HP:0001263"], "diagnosis": ["OMIM:154700"]},
        {"phenotypes": ["HP:0001166"], "diagnosis": ["OMIM:154700"]},
        {"phenotypes": ["HP:0001263", "HP:0001250"], "diagnosis": ["OMIM:101600"]},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    with pytest.raises(
        UserInputError, match=r"cases\.jsonl:1\).*cases\.jsonl:3\) \(different diagnoses"
    ):
        gym.make("RareDiseaseDiagnosis-v0", tasks=str(path))
    rows[2]["diagnosis"] = ["OMIM:154700"]
    with pytest.raises(UserInputError, match="the same diagnosis"):
        gym.make("RareDiseaseDiagnosis-v0", tasks=rows)
    env = gym.make("RareDiseaseDiagnosis-v0", tasks=rows[:2])
    assert len({env.unwrapped.tasks[i].id for i in range(2)}) == 2


class MemoSampler:
    """A sampler that keeps every patient it drew, so a plan and a check share one pass over the split."""

    def __init__(self, sampler: PatientSampler) -> None:
        self.sampler, self.drawn = sampler, {}

    def sample_case(self, disease_id: str, seed: int) -> Patient:
        key = (disease_id, seed)
        if key not in self.drawn:
            self.drawn[key] = self.sampler.sample_case(disease_id, seed)
        return self.drawn[key]


@pytest.mark.slow
@pytest.mark.parametrize("preset", DEFAULT_PRESETS)
def test_shipped_train_plans_match_a_fresh_scan_and_serve_distinct_presentations(
    kb: HpoKnowledgeBase, preset: str
) -> None:
    sampler = PatientSampler(kb, PRESETS[preset])
    cases = mixed_case_list(kb, "train")
    memo = MemoSampler(sampler)
    plan = plan_cases(memo, cases)  # type: ignore[arg-type]
    key = plan_key(kb, sampler, "train", cases.cases_per_disease, cases.mix)
    assert PUBLISHED_PLANS.get(key) == plan.to_json(), (
        f"paste into unique_case_plans.py: {key!r}: {plan.to_json()}"
    )
    original = [presentation_key(memo.sample_case(*c)) for c in cases]
    for i in (
        *plan.redrawn,
        *plan.dropped,
    ):  # a case moves only when an earlier one showed its presentation
        assert original[i] in original[:i]
    assert max(plan.redrawn.values(), default=0) <= MAX_REDRAWS
    served = UniqueCases(cases, lambda: plan)
    shown = Counter(presentation_key(memo.sample_case(*c)) for c in served)
    assert len(served) == 32_845 - len(plan.dropped) and max(shown.values()) == 1
