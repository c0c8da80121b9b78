"""``agentenv eval``: run an agent on an env id into a run directory that never loses finished work.

Why it is built this way: an evaluation may run for hours against a paid
endpoint. So the run directory (:class:`~agentenv.evaluation.run_dir.RunDirectory`)
refuses to overwrite a run unless told, appends each episode as it finishes,
and on Ctrl-C or SIGTERM writes a summary marked ``"complete": false`` and
exits 130; ``--resume`` runs only the missing episodes. The agent is checked
before the first episode (a dead LLM endpoint fails in seconds), and the run
stops after ``--max-agent-failures`` agent failures in a row.

Example:
    >>> from agentenv.cli_args import ArgumentParser
    >>> sub = ArgumentParser(prog="agentenv").add_subparsers(dest="command")
    >>> args = add_parser(sub).parse_args(["MediaSearch-v0", "--agent", "oracle"])
    >>> args.split, args.episodes, args.env_arg, args.max_agent_failures, args.resume, args.overwrite
    ('test', None, [], 10, False, False)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentenv.cli_args import (
    add_split_argument,
    check_env_args,
    check_split,
    check_tasks_path,
    env_spec,
    key_values,
    parse_env_args,
)
from agentenv.errors import UserInputError

if TYPE_CHECKING:
    from agentenv.evaluation.run_dir import RunDirectory
    from agentenv.evaluation.runner import RunConfig, RunResult

COMMAND = "eval"
HELP = "evaluate an agent on an env id"
DEFAULT_EPISODES = 100
"""``agentenv eval --episodes`` without ``--tasks``."""
INTERRUPTED_EXIT = 130
"""Exit status of a run stopped by Ctrl-C or SIGTERM (its finished episodes and summary are written)."""
INCOMPLETE_RUN_EXIT = 4
"""Exit status of ``agentenv eval --ray`` when episodes are missing (workers died and retries ran out)."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``eval`` to an ``argparse`` sub-parser collection."""
    ev = sub.add_parser(COMMAND, help=HELP)
    ev.add_argument("env_id")
    ev.add_argument(
        "--agent",
        required=True,
        help="agent name: random, oracle, bm25, llm, hf, sb3, one the env's family declares "
        "(agentenv list shows them, e.g. phenotype-ranker), or one registered with "
        "agentenv.evaluation.agents.register_agent / the agentenv.agents entry-point group",
    )
    ev.add_argument(
        "--agent-args", nargs="*", default=[], metavar="K=V", help="agent keyword arguments"
    )
    add_split_argument(
        ev, "test", "split to evaluate on", "note gym.make and training default to train"
    )
    ev.add_argument(
        "--episodes",
        type=int,
        default=None,
        help=f"episodes to run (default: {DEFAULT_EPISODES}; with --tasks, one pass over its tasks; "
        "with --resume, the resumed run's); more episodes than tasks repeats tasks",
    )
    ev.add_argument("--seed", type=int, default=0, help="run seed (default: %(default)s)")
    ev.add_argument(
        "--workers",
        type=int,
        default=1,
        help="processes (default: %(default)s); results are identical for any value",
    )
    ev.add_argument(
        "--concurrency",
        type=int,
        default=1,
        metavar="N",
        help="episodes in flight on threads of one process, for agents that wait on an endpoint (llm): "
        "64 in flight cost 64 threads, not 64 processes; with --workers, threads in each worker; "
        "results are identical for any value; not with --ray (default: %(default)s)",
    )
    ev.add_argument(
        "--ray",
        metavar="local|auto|ADDRESS",
        default=None,
        help="run the --workers on Ray actors: local (start Ray here), auto (the cluster this machine "
        "joined) or the head's HOST:PORT; results are identical to a local run (default: none, local "
        "processes; needs the ray extra)",
    )
    ev.add_argument(
        "--tasks",
        type=Path,
        help="your own tasks instead of the split: a JSONL file (one task per line), "
        "a phenopacket JSON file, or a folder of phenopacket JSON files (rare-disease envs); one pass by "
        "default; recorded as split 'custom' (default: none)",
    )
    ev.add_argument(
        "--reward", help="reward preset name or config file (default: the env's, strict)"
    )
    ev.add_argument(
        "--env-arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="keyword argument for gym.make, e.g. k=3, presentation=text, max_turns=12 (repeatable; "
        "VALUE is read as JSON when it parses, else as a string)",
    )
    ev.add_argument(
        "--out",
        type=Path,
        default=Path("results"),
        help="run directory for summary.json and episodes.jsonl (default: %(default)s); "
        "give each run its own, e.g. results/oracle, for `agentenv leaderboard results/`",
    )
    existing = ev.add_mutually_exclusive_group()
    existing.add_argument(
        "--overwrite", action="store_true", help="replace the run already in --out"
    )
    existing.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --out: its env, kwargs, agent, split or task file and seed must "
        "match; only the missing episodes run, and the result is what one uninterrupted run writes",
    )
    ev.add_argument(
        "--max-agent-failures",
        type=int,
        default=10,
        metavar="N",
        help="stop after N episodes in a row end in an agent failure, keeping what finished "
        "(default: %(default)s; 0: never stop)",
    )
    ev.add_argument("--no-progress", action="store_true", help="no progress bar")
    return ev


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """The run an ``eval`` command line asks for, every value checked (a bad one is a one-line error)."""
    from agentenv.evaluation.runner import RunConfig

    if args.episodes is not None and args.episodes < 1:
        raise UserInputError(f"--episodes must be at least 1, got {args.episodes}")
    if args.workers < 1:
        raise UserInputError(f"--workers must be at least 1, got {args.workers}")
    if args.concurrency < 1:
        raise UserInputError(f"--concurrency must be at least 1, got {args.concurrency}")
    if args.concurrency > 1 and args.ray is not None:
        raise UserInputError(
            "--concurrency runs threads in local processes, not on Ray actors (each runs one "
            "episode at a time): drop --ray, or ask Ray for more actors with --workers"
        )
    if args.max_agent_failures < 0:
        raise UserInputError(
            f"--max-agent-failures must be 0 (never stop) or more, got {args.max_agent_failures}"
        )
    env_spec(args.env_id)  # an unknown id is a one-line error
    env_kwargs = parse_env_args(args.env_arg)
    check_env_args(args.env_id, env_kwargs)
    check_split(args.env_id, args.split)
    if args.tasks is not None:
        check_tasks_path(args.tasks)
        env_kwargs["tasks"] = str(args.tasks)
    if args.reward:
        env_kwargs["reward"] = args.reward
    episodes = args.episodes
    if episodes is None and args.tasks is None:
        episodes = DEFAULT_EPISODES  # with --tasks, None: one pass over the file's tasks
    return RunConfig(
        env_id=args.env_id,
        agent=args.agent,
        split=args.split,
        episodes=episodes,
        seed=args.seed,
        workers=args.workers,
        concurrency=args.concurrency,
        agent_args=key_values(args.agent_args),
        env_kwargs=tuple(sorted(env_kwargs.items())),
    )


def identity(config: RunConfig, tasks_sha256: str | None) -> dict[str, Any]:
    """What ``run.json`` records and ``--resume`` checks: the run's definition, secrets redacted."""
    from agentenv.evaluation.report import _is_secret

    return {
        "env_id": config.env_id,
        "env_kwargs": {k: v for k, v in config.env_kwargs if k != "tasks"},
        "agent": config.agent,
        "agent_args": {k: ("<redacted>" if _is_secret(k) else v) for k, v in config.agent_args},
        "split": "custom" if tasks_sha256 else config.split,
        "tasks_sha256": tasks_sha256,
        "seed": config.seed,
        "episodes": config.episodes,
    }


def run(args: argparse.Namespace) -> int:
    """Run ``agentenv eval`` and return its exit status."""
    from agentenv.evaluation.run_dir import RunDirectory, sigterm_as_interrupt
    from agentenv.evaluation.runner import RunStopped, tasks_file_record

    config = config_from_args(args)
    tasks_file = tasks_file_record(args.tasks) if args.tasks is not None else None
    mode = "resume" if args.resume else "overwrite" if args.overwrite else "new"
    if args.resume and args.episodes is None:
        config = _resumed_episodes(args.out, config)
    run_dir = RunDirectory(args.out, identity(config, tasks_file and tasks_file["sha256"]), mode)
    meta_extra = {"tasks_file": tasks_file} if tasks_file is not None else {}
    previous = run_dir.records
    if config.episodes is not None and run_dir.done > config.episodes:
        raise UserInputError(
            f"--resume: {args.out} already holds {run_dir.done} episodes, more than "
            f"--episodes {config.episodes}"
        )
    limit = args.max_agent_failures or None
    try:
        with sigterm_as_interrupt():  # SIGTERM stops the run as Ctrl-C does
            result = _execute(config, args, run_dir, limit)
    except RunStopped as stop:
        done, planned = len(previous) + len(stop.result.records), stop.result.config.episodes
        if done:
            _write_summary(run_dir, stop.result, previous, meta_extra, stopped=stop)
        if stop.reason == "interrupted":
            print(
                f"agentenv: interrupted after {done} of {planned} episodes; they are in "
                f'{args.out / "episodes.jsonl"} (summary: "complete": false); add --resume to finish',
                file=sys.stderr,
            )
            return INTERRUPTED_EXIT
        print(
            f'agentenv eval: stopped: {stop}; {done} episodes kept in {args.out} (summary: "complete": false). '
            "Fix the agent, then add --resume (or --max-agent-failures 0 to never stop)",
            file=sys.stderr,
        )
        from agentenv.evaluation.report import FAILED_RUN_EXIT

        return FAILED_RUN_EXIT
    except _Incomplete as lost:
        if previous or lost.result.records:
            _write_summary(run_dir, lost.result, previous, meta_extra, stopped=lost)
        print(
            f"agentenv: error: {lost}; the finished episodes are in {args.out / 'episodes.jsonl'} "
            '(summary: "complete": false); add --resume to run the missing ones',
            file=sys.stderr,
        )
        return INCOMPLETE_RUN_EXIT
    finally:
        run_dir.close()
    summary = _write_summary(run_dir, result, previous, meta_extra)
    from agentenv.evaluation.report import exit_code, format_table

    print(format_table(summary))
    print(f"wrote {args.out / 'summary.json'} and {args.out / 'episodes.jsonl'}")
    return exit_code(summary)  # non-zero when most episodes ended in an agent failure


class _Incomplete(Exception):
    """A Ray run that lost episodes for good: ``result`` holds those that finished in order."""

    def __init__(self, message: str, result: RunResult) -> None:
        super().__init__(message)
        self.result = result
        self.reason = "lost Ray workers"


def _execute(
    config: RunConfig, args: argparse.Namespace, run_dir: RunDirectory, limit: int | None
) -> RunResult:
    from agentenv.evaluation.runner import run

    if args.ray is None:
        return run(
            config,
            progress=not args.no_progress,
            start=run_dir.done,
            on_start=run_dir.start,
            on_record=run_dir.append,
            max_agent_failures=limit,
        )
    from agentenv.evaluation.runner import RunResult
    from agentenv.integrations.ray.evaluation import RunIncomplete, run_on_ray

    kept: list[dict[str, Any]] = []

    def append(record: dict[str, Any]) -> None:
        kept.append(record)
        run_dir.append(record)

    try:
        return run_on_ray(
            config,
            args.ray,
            progress=not args.no_progress,
            start=run_dir.done,
            on_start=run_dir.start,
            on_record=append,
            max_agent_failures=limit,
        )
    except RunIncomplete as err:
        from dataclasses import replace

        planned = config.episodes if config.episodes is not None else len(kept) + len(err.missing)
        raise _Incomplete(
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
    """``--resume`` without ``--episodes`` keeps the resumed run's planned count."""
    import json
    from dataclasses import replace

    from agentenv.evaluation.run_dir import IDENTITY_FILE

    try:
        planned = json.loads((out / IDENTITY_FILE).read_text(encoding="utf-8")).get("episodes")
    except (OSError, ValueError):
        return config  # RunDirectory says what is wrong with it
    return replace(config, episodes=planned) if isinstance(planned, int) else config
