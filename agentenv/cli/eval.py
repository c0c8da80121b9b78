"""``agentenv eval``: run an agent on an env id into a run directory that never loses finished work.

The run itself is :func:`agentenv.evaluation.evaluate.evaluate`, the same
call a Python user makes; this module parses the flags and prints. Why the
run is built this way: an evaluation may run for hours against a paid
endpoint. So the run directory (:class:`~agentenv.evaluation.run_dir.RunDirectory`)
refuses to overwrite a run unless told, appends each episode as it finishes,
and on Ctrl-C or SIGTERM writes a summary marked ``"complete": false`` and
exits 130; ``--resume`` runs only the missing episodes. The agent is checked
before the first episode (a dead LLM endpoint fails in seconds), and the run
stops after ``--max-agent-failures`` agent failures in a row.

Example:
    >>> from agentenv.evaluation.run_args import ArgumentParser
    >>> sub = ArgumentParser(prog="agentenv").add_subparsers(dest="command")
    >>> args = add_parser(sub).parse_args(["MediaSearch-v0", "--agent", "oracle"])
    >>> args.split, args.episodes, args.env_arg, args.max_agent_failures, args.resume, args.overwrite
    ('test', None, [], 10, False, False)
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentenv.evaluation.run_args import (
    MAX_EPISODES,
    add_split_argument,
    count_of,
    key_values,
    out_path,
    parse_env_args,
    seed_number,
    tasks_path,
)

if TYPE_CHECKING:
    from agentenv.evaluation.runner import RunConfig

COMMAND = "eval"
HELP = "evaluate an agent on an env id"
DEFAULT_EPISODES = 100
"""``agentenv eval --episodes`` without ``--tasks`` (:data:`agentenv.evaluation.evaluate.DEFAULT_EPISODES`)."""
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
        type=count_of("episodes", MAX_EPISODES),
        default=None,
        help=f"episodes to run (default: {DEFAULT_EPISODES}; with --tasks, one pass over its tasks; "
        "with --resume, the resumed run's); more episodes than tasks repeats tasks",
    )
    ev.add_argument("--seed", type=seed_number, default=0, help="run seed (default: %(default)s)")
    ev.add_argument(
        "--workers",
        type=count_of("workers", 1024),
        default=1,
        help="processes (default: %(default)s); at most one per episode is started; results are "
        "identical for any value",
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
        type=tasks_path,
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
        help="keyword argument for gym.make, e.g. max_turns=12 compact=true (MediaSearch) or k=3 "
        "(RareDiseaseDiagnosis); repeatable; VALUE is read as JSON when it parses, else as a string",
    )
    ev.add_argument(
        "--out",
        type=out_path,
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
    ev.add_argument(
        "--skip-bad-rows",
        action="store_true",
        help="with --tasks, evaluate the good rows of a task file with bad ones (each skipped row is "
        "warned about and counted in summary.json's skipped_task_rows) instead of refusing the file, "
        "which names every bad row",
    )
    ev.add_argument("--no-progress", action="store_true", help="no progress bar")
    return ev


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """The run an ``eval`` command line asks for, every value checked (a bad one is a one-line error)."""
    from agentenv.evaluation.evaluate import run_config

    return run_config(**_values(args))


def _values(args: argparse.Namespace) -> dict[str, Any]:
    """The flags as :func:`~agentenv.evaluation.evaluate.run_config`'s keywords."""
    return {
        "env_id": args.env_id,
        "agent": args.agent,
        "split": args.split,
        "episodes": args.episodes,
        "seed": args.seed,
        "workers": args.workers,
        "concurrency": args.concurrency,
        "ray": args.ray,
        "tasks": args.tasks,
        "reward": args.reward,
        "env_kwargs": parse_env_args(args.env_arg),
        "agent_args": dict(key_values(args.agent_args)),
        "max_agent_failures": args.max_agent_failures,
    }


def run(args: argparse.Namespace) -> int:
    """Run ``agentenv eval`` through :func:`~agentenv.evaluation.evaluate.evaluate`; return its exit status."""
    from agentenv.engine.task_files import SKIP_BAD_ROWS_ENV

    if not getattr(args, "skip_bad_rows", False):
        return _run(args)
    # read by the task readers here and in worker processes, for this run only: main() called
    # in a process that goes on (a notebook, a test) must not skip bad rows in its later reads
    before = os.environ.get(SKIP_BAD_ROWS_ENV)
    os.environ[SKIP_BAD_ROWS_ENV] = "1"
    try:
        return _run(args)
    finally:
        if before is None:
            os.environ.pop(SKIP_BAD_ROWS_ENV, None)
        else:
            os.environ[SKIP_BAD_ROWS_ENV] = before


def _run(args: argparse.Namespace) -> int:
    from agentenv.evaluation.evaluate import evaluate
    from agentenv.terminal_text import terminal_text

    new_folder = not (args.out.is_dir() and any(args.out.iterdir()))
    try:
        result = evaluate(
            **_values(args),
            out=args.out,
            resume=args.resume,
            overwrite=args.overwrite,
            progress=not args.no_progress,
        )
    except BaseException:
        if new_folder:
            _drop_empty_run(args.out)
        raise
    episodes = args.out / "episodes.jsonl"
    if result.status == "interrupted":
        from agentenv.evaluation.run_dir import PREVIOUS_RUN

        kept = args.out / PREVIOUS_RUN
        print(
            terminal_text(
                f"agentenv: interrupted after {result.done} of {result.planned} episodes; they are "
                f'in {episodes} (summary: "complete": false); add --resume to finish'
                + (f"; the run it replaces stays in {kept} until it does" if kept.is_dir() else "")
            ),
            file=sys.stderr,
        )
        return INTERRUPTED_EXIT
    if result.status == "stopped":
        print(  # the reason may quote an endpoint's reply: shown, not obeyed
            terminal_text(
                f"agentenv eval: stopped: {result.reason}; {result.done} episodes kept in "
                f'{args.out} (summary: "complete": false). '
                "Fix the agent, then add --resume (or --max-agent-failures 0 to never stop)"
            ),
            file=sys.stderr,
        )
        from agentenv.evaluation.report import FAILED_RUN_EXIT

        return FAILED_RUN_EXIT
    if result.status == "incomplete":
        print(
            terminal_text(
                f"agentenv: error: {result.reason}; the finished episodes are in {episodes} "
                '(summary: "complete": false); add --resume to run the missing ones'
            ),
            file=sys.stderr,
        )
        return INCOMPLETE_RUN_EXIT
    from agentenv.evaluation.report import exit_code, format_table

    print(format_table(result.summary))
    print(terminal_text(f"wrote {args.out / 'summary.json'} and {episodes}"))
    return exit_code(result.summary)  # non-zero when most episodes ended in an agent failure


def _drop_empty_run(out: Path) -> None:
    """Remove a run folder this command made when the run failed before its first episode finished.

    Why: an error on the first episode (an agent that cannot play the env, say) would otherwise
    leave ``run.json`` and an empty ``episodes.jsonl``, and the fixed command, rerun with the same
    ``--out``, would be refused as "already holds a run".
    """
    from agentenv.evaluation.run_dir import EPISODES_FILE, IDENTITY_FILE

    if not out.is_dir():
        return
    entries = {entry.name: entry for entry in out.iterdir()}
    if set(entries) <= {IDENTITY_FILE, EPISODES_FILE} and (
        EPISODES_FILE not in entries or entries[EPISODES_FILE].stat().st_size == 0
    ):
        for entry in entries.values():
            entry.unlink()
        out.rmdir()
