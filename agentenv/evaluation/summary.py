"""The schema of ``summary.json``: what a run was, and what it scored.

A run is *failed* when more than :data:`MAX_AGENT_FAILURE_RATE` of its
episodes ended in an :class:`~agentenv.evaluation.agents.AgentFailure` (a
model endpoint that was down, timed out or refused the request): its
accuracy measures the endpoint, not the policy. ``agentenv eval`` then exits
non-zero and the leaderboard refuses the run unless told to keep it.

Example:
    >>> failure_rate(3, 4), is_failed_rate(failure_rate(3, 4)), is_failed_rate(0.5)
    (0.75, True, False)
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

MAX_AGENT_FAILURE_RATE = 0.5
"""More than this share of episodes with an agent failure makes a failed run."""


def failure_rate(failures: int, episodes: int) -> float:
    """Share of episodes that ended in an agent failure (0.0 for no episodes)."""
    return failures / episodes if episodes else 0.0


def is_failed_rate(rate: float) -> bool:
    """Whether an agent-failure rate makes a failed run (strictly more than half)."""
    return rate > MAX_AGENT_FAILURE_RATE


class Metric(BaseModel):
    """A mean with its 95% bootstrap interval."""

    mean: float
    ci_low: float
    ci_high: float


class TasksFile(BaseModel):
    """The user's ``--tasks`` source: where it was, its sha256 (a directory: over its files) and its task count."""

    path: str
    sha256: str
    count: int


class Summary(BaseModel):
    """One evaluation run; enough to reproduce it and to compare it on a leaderboard."""

    env_id: str
    env_version: int = Field(description="The -vN of the env id.")
    package_version: str
    corpus_checksums: dict[str, str] = Field(default_factory=dict)
    agent: str
    agent_args: dict[str, str] = Field(default_factory=dict)
    split: str = Field(description='The split served, or "custom" for a --tasks file.')
    episodes: int
    n_tasks: int | None = Field(default=None, description="Tasks the episodes were drawn from.")
    tasks_repeated: bool = Field(
        default=False, description="More episodes than tasks: some tasks ran twice."
    )
    tasks_file: TasksFile | None = None
    import_warnings: list[str] = Field(
        default_factory=list,
        description="What the env skipped or changed while reading the task file, with file:line.",
    )
    skipped_task_rows: int = Field(
        default=0, description="Bad rows of the task file skipped (agentenv eval --skip-bad-rows)."
    )
    env_kwargs: dict[str, Any] = Field(
        default_factory=dict, description="Keyword arguments given to gym.make."
    )
    seed: int
    workers: int = 1
    backend: str = Field(
        default="local", description='Where the episodes ran: "local" processes or "ray" actors.'
    )
    distributed: dict[str, Any] | None = Field(
        default=None,
        description="Ray runs: address, nodes, episodes per call, actors started and lost, episodes rerun.",
    )
    reward_preset: str
    fingerprint: dict[str, str] | None = Field(
        default=None,
        description="What the agent was shown and how it was graded, as hashes: system_prompt, tools, "
        "reward (the preset's resolved definition) and grader (family/version); see "
        "agentenv.evaluation.fingerprint. None: written before runs had fingerprints.",
    )
    episodes_digest: str | None = Field(
        default=None,
        description="The digest of episodes.jsonl's last row (its chain starts at run.json's header); "
        "the leaderboard checks it. None: an unverified run (written without row digests).",
    )
    metrics: dict[str, float]
    intervals: dict[str, Metric]
    component_means: dict[str, float]
    per_kind_accuracy: dict[str, float] = Field(default_factory=dict)
    per_difficulty_accuracy: dict[str, float] = Field(default_factory=dict)
    wall_time_s: float = Field(description="build_s plus the episode loop.")
    build_s: float = Field(
        default=0.0, description="Env construction and a first reset (every worker)."
    )
    episodes_per_s: float = Field(
        description="Episodes per second of the episode loop alone (build excluded)."
    )
    agent_failures: int = Field(
        default=0,
        description="Episodes that ended in an AgentFailure (endpoint down, timeout, refused request).",
    )
    agent_failure_rate: float = Field(default=0.0, description="agent_failures / episodes.")
    agent_failure_reasons: dict[str, int] = Field(
        default_factory=dict,
        description="The most common failure reasons (shortened) and how many episodes each ended.",
    )
    complete: bool = Field(
        default=True,
        description="False: the run stopped early (Ctrl-C, SIGTERM, agent failures in a row, lost "
        "Ray workers); `agentenv eval ... --resume` runs the missing episodes.",
    )
    episodes_planned: int | None = Field(
        default=None, description="Episodes the run was to have (incomplete runs)."
    )
    stopped: str | None = Field(default=None, description="Why an incomplete run stopped.")

    @model_serializer(mode="wrap")
    def _omit_local_backend(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A local run's summary.json stays as it was before Ray runs existed: "backend" and
        # "distributed" appear only for a distributed run (absent reads back as local).
        data = handler(self)
        if self.backend == "local" and self.distributed is None:
            data.pop("backend", None)
            data.pop("distributed", None)
        if self.complete:  # a finished run's summary.json reads as before; a stopped one says so
            for key in ("complete", "episodes_planned", "stopped"):
                data.pop(key, None)
        return data

    @property
    def failed(self) -> bool:
        """More than half of the episodes ended in an agent failure: not a measurement of the policy."""
        return is_failed_rate(self.agent_failure_rate)
