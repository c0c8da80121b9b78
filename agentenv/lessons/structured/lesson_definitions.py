"""The workshop's reward lessons as data: each lesson's conditions (env id and reward), metrics and budgets.

Why a module of its own: the lessons and their budgets are what a reader checks
first (what is trained, for how long, on what); running and summarising them
live in :mod:`agentenv.lessons.structured.lessons` and :mod:`agentenv.lessons.structured.lesson_summary`.
Nothing is tuned on test: the budgets were set from training curves on the train split.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agentenv.errors import UserInputError

ACCURACY_PLUS_FORMAT: dict[str, Any] = {
    "name": "accuracy+format",
    "weights": {"accuracy": 1.0, "format": 0.1},
}
"""The tool-cost lesson's free-tools reward: accuracy, plus 0.1 for a well-formed answered episode."""
BASELINES = ("random", "bm25", "oracle")


@dataclass(frozen=True)
class Budget:
    """How much a lesson trains and evaluates."""

    seeds: int
    """Training seeds 0..seeds-1 (unless ``seed_list`` names them)."""
    timesteps: int
    eval_episodes: int
    """Test episodes per trained policy."""
    baseline_episodes: int
    """Test episodes per baseline agent."""
    warm_timesteps: int = 0
    """Steps of the shared warm start before the conditions split (tool-cost only)."""
    train_tasks: int = 2_000
    """Train-split tasks each run draws from (quick runs use fewer: each new patient costs ~6 ms to simulate)."""
    seed_list: tuple[int, ...] | None = None
    """Explicit training seeds (``--seed-list 3,4``); ``None``: 0..seeds-1."""

    @property
    def seed_values(self) -> tuple[int, ...]:
        """The seeds to train: ``seed_list``, else 0..seeds-1."""
        return self.seed_list if self.seed_list is not None else tuple(range(self.seeds))


@dataclass(frozen=True)
class Condition:
    """One trained setting of a lesson: its key in ``summary.json``, env id, reward and env kwargs."""

    key: str
    env_id: str
    reward: Any
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    group: str = ""
    """Where the condition sits in ``summary.json`` (single-vs-multi: the family)."""


@dataclass(frozen=True)
class Lesson:
    """A lesson: its conditions, default and quick budgets, and the metrics it reports."""

    name: str
    conditions: tuple[Condition, ...]
    default: Budget
    quick: Budget
    metrics: Mapping[str, Callable[[Mapping[str, Any]], float]]
    """Summary metric name -> value of one test episode record."""
    warm_start: Condition | None = None
    """Trained first, once per seed; every condition continues from it (see the tool-cost lesson)."""


def component_mean(key: str) -> Callable[[Mapping[str, Any]], float]:
    return lambda record: float(record["components"].get(key, 0.0))


LESSONS: dict[str, Lesson] = {
    "reward-hacking": Lesson(
        "reward-hacking",
        (
            Condition("strict", "RareDiseaseDiagnosis-v0", "strict"),
            Condition("lenient", "RareDiseaseDiagnosis-v0", "lenient"),
        ),
        default=Budget(seeds=3, timesteps=20_000, eval_episodes=300, baseline_episodes=300),
        quick=Budget(
            seeds=1, timesteps=5_000, eval_episodes=60, baseline_episodes=60, train_tasks=400
        ),
        metrics={
            "mean_predictions": component_mean("n_predictions"),
            "top3_accuracy": component_mean("hit@3"),
            "reward": lambda r: float(r["reward"]),
            "hit_any": component_mean("hit@any"),
        },
    ),
    "tool-cost": Lesson(
        "tool-cost",
        (
            Condition("accuracy_only", "MediaSearch-v0", ACCURACY_PLUS_FORMAT),
            Condition("efficient", "MediaSearch-v0", "efficient"),
        ),
        default=Budget(
            seeds=3,
            timesteps=25_000,
            eval_episodes=300,
            baseline_episodes=300,
            warm_timesteps=15_000,
        ),
        quick=Budget(
            seeds=1, timesteps=3_000, eval_episodes=60, baseline_episodes=60, warm_timesteps=4_000
        ),
        metrics={
            "tool_calls": lambda r: float(r["tool_calls"]),
            "accuracy": component_mean("accuracy"),
            "reward": lambda r: float(r["reward"]),
        },
        warm_start=Condition("warm_start", "MediaSearch-v0", ACCURACY_PLUS_FORMAT),
    ),
    "single-vs-multi": Lesson(
        "single-vs-multi",
        (
            Condition("single_turn", "MediaSearch-SingleTurn-v0", "strict", group="media_search"),
            Condition("multi_turn", "MediaSearch-v0", "strict", group="media_search"),
            Condition(
                "single_turn", "RareDiseaseDiagnosis-SingleTurn-v0", "strict", group="rare_disease"
            ),
            Condition("multi_turn", "RareDiseaseDiagnosis-v0", "strict", group="rare_disease"),
        ),
        default=Budget(seeds=3, timesteps=15_000, eval_episodes=300, baseline_episodes=300),
        quick=Budget(
            seeds=1, timesteps=2_000, eval_episodes=40, baseline_episodes=40, train_tasks=400
        ),
        metrics={
            "accuracy": component_mean("accuracy"),
            "reward": lambda r: float(r["reward"]),
            "tool_calls": lambda r: float(r["tool_calls"]),
        },
    ),
}


def budget_for(
    lesson: Lesson,
    *,
    quick: bool,
    seeds: int | None = None,
    timesteps: int | None = None,
    eval_episodes: int | None = None,
    baseline_episodes: int | None = None,
    seed_list: Sequence[int] | None = None,
) -> Budget:
    """The lesson's default or quick budget with the given overrides; bad values name the flag.

    ``seeds`` N always means seeds 0..N-1; ``seed_list`` names other seeds (``--seed-list 3,4``).
    Baseline agents play the first ``baseline_episodes`` of each seed's test episodes (by default
    all of them: the same episodes as the trained policies)."""
    budget = lesson.quick if quick else lesson.default
    if seeds is not None and seed_list is not None:
        raise UserInputError("give --seeds N (seeds 0..N-1) or --seed-list A,B,..., not both")
    overrides = {
        "seeds": seeds,
        "timesteps": timesteps,
        "eval_episodes": eval_episodes,
        "baseline_episodes": baseline_episodes,
    }
    for name, value in overrides.items():
        least = 0 if name == "baseline_episodes" else 1  # 0 baselines: none are played
        if value is not None and value < least:
            raise UserInputError(f"--{name.replace('_', '-')} must be >= {least}, got {value}")
    budget = replace(budget, **{k: v for k, v in overrides.items() if v is not None})
    if eval_episodes is not None and baseline_episodes is None:
        budget = replace(budget, baseline_episodes=eval_episodes)
    if budget.baseline_episodes > budget.eval_episodes:
        raise UserInputError(
            f"--baseline-episodes {budget.baseline_episodes} is more than --eval-episodes "
            f"{budget.eval_episodes}: baselines play the policies' episodes; give at most that many"
        )
    if seed_list is not None:
        values = tuple(int(v) for v in seed_list)
        if not values or any(v < 0 for v in values) or len(set(values)) != len(values):
            raise UserInputError(
                f"--seed-list must name distinct seeds >= 0, e.g. 3,4; got {list(seed_list)}"
            )
        budget = replace(budget, seeds=len(values), seed_list=values)
    return budget
