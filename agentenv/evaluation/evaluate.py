"""``evaluate(env_id, agent, out=...)``: what ``agentenv eval`` does, as one library call.

Why a library call: a Python user who wants a resumable run in a directory
(local processes or Ray) should not copy the command line's code. This
module holds that code; ``agentenv eval`` (:mod:`agentenv.cli.eval`)
parses flags, calls :func:`evaluate` and prints what it returns.

The run directory (:class:`~agentenv.evaluation.run_dir.RunDirectory`)
refuses to overwrite a run unless told (``overwrite=True``), appends each
episode as it finishes, and on Ctrl-C or SIGTERM keeps what finished: the
summary is written marked ``"complete": false`` and the returned
:class:`Evaluation` says ``"interrupted"``. ``resume=True`` runs only the
missing episodes. A run stops after ``max_agent_failures`` agent failures in
a row (``"stopped"``); a Ray run whose workers died for good is
``"incomplete"``. Nothing here prints.

Example:
    >>> import tempfile
    >>> out = tempfile.mkdtemp()
    >>> run = evaluate("MediaSearch-SingleTurn-v0", "random", out=out, episodes=2)
    >>> run.status, run.summary.episodes
    ('complete', 2)
    >>> evaluate("MediaSearch-SingleTurn-v0", "random", out=out, episodes=2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    agentenv.errors.UserInputError: ...
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentenv.errors import UserInputError

if TYPE_CHECKING:
    from agentenv.evaluation.run_dir import RunDirectory
    from agentenv.evaluation.runner import RunConfig, RunResult

DEFAULT_EPISODES = 100
"""Episodes of a run without ``tasks`` when ``episodes`` is not given."""

Status = Literal["complete", "interrupted", "stopped", "incomplete"]


@dataclass(frozen=True)
class Evaluation:
    """What one :func:`evaluate` call left in ``out``.

    Attributes:
        status: ``"complete"``; ``"interrupted"`` (Ctrl-C or SIGTERM); ``"stopped"``
            (too many agent failures in a row); ``"incomplete"`` (Ray workers lost).
            Every status but ``complete`` can be finished with ``resume=True``.
        summary: the run's summary (also in ``out/summary.json``), or ``None`` when
            no episode finished.
        done: episodes in ``out/episodes.jsonl``, this call's and any resumed ones.
        planned: episodes the run asked for (``None``: one pass over ``tasks``).
        out: the run directory.
        reason: why a run that is not complete stopped, in one line.
    """

    status: Status
    summary: Any
    done: int
    planned: int | None
    out: Path
    reason: str = ""


def evaluate(
    env_id: str,
    agent: str,
    *,
    out: str | Path,
    resume: bool = False,
    overwrite: bool = False,
    workers: int = 1,
    ray: str | None = None,
    split: str = "test",
    episodes: int | None = None,
    seed: int = 0,
    concurrency: int = 1,
    tasks: str | Path | None = None,
    reward: str | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    agent_args: Mapping[str, str] | None = None,
    max_agent_failures: int = 10,
    progress: bool = False,
) -> Evaluation:
    """Run ``agent`` on ``env_id`` into the run directory ``out``, as ``agentenv eval`` does.

    Args:
        env_id: a registered id, or ``"module:Id"`` for a family outside this package.
        agent: an agent name (``agentenv.evaluation.agents.agent_names()``).
        out: the run directory (``summary.json``, ``episodes.jsonl``, ``run.json``).
        resume: continue the run in ``out`` (same env, kwargs, agent, split or tasks, seed);
            only the missing episodes run, and the result is what one uninterrupted run writes.
        overwrite: replace the run in ``out``; without it or ``resume``, a run there is an error.
        workers: processes (or Ray actors with ``ray``); results are identical for any value.
        ray: ``"local"``, ``"auto"`` or the head's ``HOST:PORT`` to run the workers on Ray.
        split: a split the env's family declares (``Family.splits``).
        episodes: how many; default 100, or one pass over ``tasks``, or the resumed run's.
        seed: the run seed.
        concurrency: episodes in flight on threads of each process (for agents that wait).
        tasks: your own task file instead of the split (recorded as split ``custom``).
        reward: a reward preset name or config file.
        env_kwargs: more ``gym.make`` keywords.
        agent_args: the agent's keyword arguments, as strings (``--agent-args``).
        max_agent_failures: stop after this many agent failures in a row (0: never).
        progress: show a progress bar.

    Raises:
        UserInputError: a bad value, or a run already in ``out`` (and neither flag).
    """
    from agentenv.evaluation.run_dir import RunDirectory, sigterm_as_interrupt
    from agentenv.evaluation.runner import RunStopped, tasks_file_record

    out = Path(out)
    if resume and overwrite:
        raise UserInputError("resume and overwrite exclude each other: pick one")
    config = run_config(
        env_id,
        agent,
        split=split,
        episodes=episodes,
        seed=seed,
        workers=workers,
        concurrency=concurrency,
        ray=ray,
        tasks=tasks,
        reward=reward,
        env_kwargs=env_kwargs,
        agent_args=agent_args,
        max_agent_failures=max_agent_failures,
    )
    tasks_file = tasks_file_record(Path(tasks)) if tasks is not None else None
    mode = "resume" if resume else "overwrite" if overwrite else "new"
    if resume and episodes is None:
        config = _resumed_episodes(out, config)
    run_dir = RunDirectory(out, identity(config, tasks_file and tasks_file["sha256"]), mode)
    meta_extra = {"tasks_file": tasks_file} if tasks_file is not None else {}
    previous = run_dir.records
    if config.episodes is not None and run_dir.done > config.episodes:
        raise UserInputError(
            f"--resume: {out} already holds {run_dir.done} episodes, more than "
            f"--episodes {config.episodes}"
        )
    limit = max_agent_failures or None
    try:
        with sigterm_as_interrupt():  # SIGTERM stops the run as Ctrl-C does
            result = _execute(config, ray, run_dir, limit, progress)
    except RunStopped as stop:
        done = len(previous) + len(stop.result.records)
        summary = (
            _write_summary(run_dir, stop.result, previous, meta_extra, stopped=stop)
            if done
            else None
        )
        status: Status = "interrupted" if stop.reason == "interrupted" else "stopped"
        return Evaluation(status, summary, done, stop.result.config.episodes, out, str(stop))
    except RunIncomplete as lost:
        summary = None
        if previous or lost.result.records:
            summary = _write_summary(run_dir, lost.result, previous, meta_extra, stopped=lost)
        done = len(previous) + len(lost.result.records)
        return Evaluation("incomplete", summary, done, lost.result.config.episodes, out, str(lost))
    finally:
        run_dir.close()
    summary = _write_summary(run_dir, result, previous, meta_extra)
    return Evaluation(
        "complete", summary, len(previous) + len(result.records), config.episodes, out
    )


def run_config(
    env_id: str,
    agent: str,
    *,
    split: str = "test",
    episodes: int | None = None,
    seed: int = 0,
    workers: int = 1,
    concurrency: int = 1,
    ray: str | None = None,
    tasks: str | Path | None = None,
    reward: str | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    agent_args: Mapping[str, str] | None = None,
    max_agent_failures: int = 10,
) -> RunConfig:
    """The run these values ask for, every value checked (a bad one is a one-line :class:`UserInputError`)."""
    from agentenv.evaluation.agents import agent_factory
    from agentenv.evaluation.run_args import check_env_args, check_split, check_tasks_path, env_spec
    from agentenv.evaluation.runner import RunConfig, is_dialogue_id

    if episodes is not None and episodes < 1:
        raise UserInputError(f"--episodes must be at least 1, got {episodes}")
    if workers < 1:
        raise UserInputError(f"--workers must be at least 1, got {workers}")
    if concurrency < 1:
        raise UserInputError(f"--concurrency must be at least 1, got {concurrency}")
    if concurrency > 1 and ray is not None:
        raise UserInputError(
            "--concurrency runs threads in local processes, not on Ray actors (each runs one "
            "episode at a time): drop --ray, or ask Ray for more actors with --workers"
        )
    if max_agent_failures < 0:
        raise UserInputError(
            f"--max-agent-failures must be 0 (never stop) or more, got {max_agent_failures}"
        )
    kwargs = dict(env_kwargs or {})
    if is_dialogue_id(env_id):
        _check_dialogue_args(env_id, kwargs, tasks)
    else:
        env_spec(env_id)  # an unknown id is a one-line error
        check_env_args(env_id, kwargs)
    check_split(env_id, split)
    agent_factory(agent)  # an unknown name is refused here, before --out is read or written
    if tasks is not None:
        check_tasks_path(Path(tasks), env_id=env_id)
        kwargs["tasks"] = str(tasks)
    if reward:
        kwargs["reward"] = reward
    if episodes is None and tasks is None:
        episodes = DEFAULT_EPISODES  # with tasks, None: one pass over the file's tasks
    return RunConfig(
        env_id=env_id,
        agent=agent,
        split=split,
        episodes=episodes,
        seed=seed,
        workers=workers,
        concurrency=concurrency,
        agent_args=tuple((agent_args or {}).items()),
        env_kwargs=tuple(sorted(kwargs.items())),
    )


def _check_dialogue_args(env_id: str, env_kwargs: dict[str, Any], tasks: Any) -> None:
    """A dialogue id is evaluated from its lead's side against its scripted simulator; refuse what that
    cannot take, in one line (the constructor refuses unknown ``--env-arg`` keys when it is built)."""
    from agentenv.evaluation.run_args import OWN_FLAGS

    for key in env_kwargs:
        if key in OWN_FLAGS:
            raise UserInputError(f"--env-arg {key}: use {OWN_FLAGS[key]} instead")
    if tasks is not None:
        raise UserInputError(
            f"--tasks: {env_id} is a dialogue and serves its own split's tasks; evaluate your "
            "tasks on the family's single-agent id instead (`agentenv list` shows it)"
        )


def identity(config: RunConfig, tasks_sha256: str | None) -> dict[str, Any]:
    """What ``run.json`` records and ``resume`` checks: the run's definition, secrets redacted."""
    from agentenv.evaluation.recorded_args import recorded_arg

    return {
        "env_id": config.env_id,
        "env_kwargs": {k: recorded_arg(k, v) for k, v in config.env_kwargs if k != "tasks"},
        "agent": config.agent,
        "agent_args": {k: recorded_arg(k, v) for k, v in config.agent_args},
        "split": "custom" if tasks_sha256 else config.split,
        "tasks_sha256": tasks_sha256,
        "seed": config.seed,
        "episodes": config.episodes,
    }


class RunIncomplete(Exception):
    """A Ray run that lost episodes for good: ``result`` holds those that finished in order."""

    def __init__(self, message: str, result: RunResult) -> None:
        super().__init__(message)
        self.result = result
        self.reason = "lost Ray workers"


def _execute(
    config: RunConfig, ray: str | None, run_dir: RunDirectory, limit: int | None, progress: bool
) -> RunResult:
    from agentenv.evaluation.runner import run

    if ray is None:
        return run(
            config,
            progress=progress,
            start=run_dir.done,
            on_start=run_dir.start,
            on_record=run_dir.append,
            max_agent_failures=limit,
        )
    from agentenv.evaluation.runner import RunResult
    from agentenv.integrations.ray.evaluation import RunIncomplete as RayLost
    from agentenv.integrations.ray.evaluation import run_on_ray

    kept: list[dict[str, Any]] = []

    def append(record: dict[str, Any]) -> None:
        kept.append(record)
        run_dir.append(record)

    try:
        return run_on_ray(
            config,
            ray,
            progress=progress,
            start=run_dir.done,
            on_start=run_dir.start,
            on_record=append,
            max_agent_failures=limit,
        )
    except RayLost as err:
        from dataclasses import replace

        planned = config.episodes if config.episodes is not None else len(kept) + len(err.missing)
        raise RunIncomplete(
            str(err), RunResult(replace(config, episodes=planned), kept, 0.0, 0.0, {})
        ) from None


def _write_summary(
    run_dir: RunDirectory,
    result: RunResult,
    previous: list[dict[str, Any]],
    meta_extra: dict[str, Any],
    stopped: Exception | None = None,
) -> Any:
    """Summarise every finished episode (those found on resume, then this session's) into ``summary.json``."""
    from agentenv.evaluation.report import summarize
    from agentenv.evaluation.runner import env_metadata, make_env

    meta = dict(result.meta) or dict(env_metadata(result.config, make_env(result.config)))
    meta.update(meta_extra, build_s=result.build_s, loop_s=result.loop_s)
    records = [*previous, *result.records]
    summary = summarize(result.config, records, result.wall_s, meta)
    summary = summary.model_copy(update={"episodes_digest": run_dir.last_digest})
    if previous:  # a resumed run: throughput is this session's episodes over this session's loop
        summary = summary.model_copy(
            update={
                "episodes_per_s": len(result.records) / result.loop_s if result.loop_s > 0 else 0.0
            }
        )
    if "distributed" in meta:
        summary = summary.model_copy(update={"backend": "ray", "distributed": meta["distributed"]})
    if stopped is not None:
        summary = summary.model_copy(
            update={
                "complete": False,
                "episodes_planned": result.config.episodes,
                "stopped": getattr(stopped, "reason", str(stopped)),
            }
        )
    run_dir.write_summary(summary.model_dump_json(indent=2))
    return summary


def _resumed_episodes(out: Path, config: RunConfig) -> RunConfig:
    """``resume`` without ``episodes`` keeps the resumed run's planned count."""
    from dataclasses import replace

    from agentenv.evaluation.run_dir import IDENTITY_FILE
    from agentenv.evaluation.run_files import read_json_object

    try:  # bounded, and never opens a FIFO
        planned = read_json_object(out / IDENTITY_FILE, "a run.json").get("episodes")
    except (OSError, ValueError):
        return config  # RunDirectory says what is wrong with it
    return replace(config, episodes=planned) if isinstance(planned, int) else config
