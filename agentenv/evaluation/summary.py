"""The schema of ``summary.json``: what a run was, and what it scored."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Metric(BaseModel):
    """A mean with its 95% bootstrap interval."""

    mean: float
    ci_low: float
    ci_high: float


class Summary(BaseModel):
    """One evaluation run; enough to reproduce it and to compare it on a leaderboard."""

    env_id: str
    env_version: int = Field(description="The -vN of the env id.")
    package_version: str
    corpus_checksums: dict[str, str] = Field(default_factory=dict)
    agent: str
    agent_args: dict[str, str] = Field(default_factory=dict)
    split: str
    episodes: int
    seed: int
    workers: int = 1
    reward_preset: str
    metrics: dict[str, float]
    intervals: dict[str, Metric]
    component_means: dict[str, float]
    per_kind_accuracy: dict[str, float] = Field(default_factory=dict)
    per_difficulty_accuracy: dict[str, float] = Field(default_factory=dict)
    wall_time_s: float
    episodes_per_s: float
