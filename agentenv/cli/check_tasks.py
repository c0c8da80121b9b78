"""``agentenv check-tasks ENV --tasks FILE``: which of your own tasks can be solved with the env's tools.

``--split NAME`` checks one of the env's shipped splits instead (the env pages quote these
counts, e.g. MediaSearch's casual split), so a reader can reproduce them.

Why a command of its own: on your own tasks there is no gold tool plan, so the
``oracle`` answers the gold text and scores 1.000 whatever the tasks are. That
proves the grader accepts the gold, not that a policy could find it. This
command asks the task's family (``Family.solvability``) why each task could not
be solved, and lists the ones that cannot, with the reason, after the
entries the env skipped while reading the file. It exits 1 when some task is
unreachable or skipped, so a data pipeline can stop on it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agentenv.cli.limit_flags import non_negative_int
from agentenv.errors import UserInputError
from agentenv.evaluation.run_args import tasks_path


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``check-tasks`` sub-command."""
    from agentenv.cli.help_format import HelpFormatter

    p = subparsers.add_parser(
        "check-tasks",
        help="check that your own tasks are solvable with the env's tools",
        description="For each task of a task file, check that its gold answer is reachable with the "
        "env's tools (media: the answer appears in tool outputs reachable from the entities "
        "the question names; rare disease: the diagnosis is in the universe and annotated). "
        "Exit status 1 when some task is not. --split checks one of the env's shipped splits "
        "instead of a file.",
        formatter_class=HelpFormatter,
    )
    p.add_argument("env_id", help="a registered env id, or MODULE:ID for a family outside agentenv")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--tasks", type=tasks_path, help="your task file (JSONL, phenopackets or a folder)"
    )
    source.add_argument(
        "--split",
        help="a split the env ships instead of a file (train, validation, test, or one its family "
        "declares: agentenv list shows them)",
    )
    p.add_argument(
        "--show",
        type=non_negative_int,
        default=20,
        help="unreachable tasks to list",
    )
    return p


def check_tasks(
    env_id: str, tasks: Path | None = None, *, split: str | None = None
) -> tuple[int, list[tuple[int, str, str, str]], tuple[str, ...]]:
    """``(n_tasks, unreachable, skipped)``: each unreachable task as ``(index, task_id, prompt, reason)``,
    and the env's import warnings for entries it skipped or changed while reading the file.

    Exactly one of ``tasks`` (a file or folder) and ``split`` (a split the env ships) is given.
    """
    if (tasks is None) == (split is None):
        raise UserInputError("check-tasks takes one of --tasks FILE and --split NAME")
    import warnings

    import gymnasium as gym

    from agentenv.evaluation.run_args import check_split, check_tasks_path, env_spec
    from agentenv.families import family_of_env, family_part

    env_spec(env_id)  # MODULE:ID imports its module; an unknown id is a one-line error
    family = family_of_env(env_id.rpartition(":")[2])
    check = family_part(family, "solvability")
    if tasks is not None:
        # an env that reads no task file, or a missing, special, binary or oversized file, is
        # refused unread
        check_tasks_path(tasks, env_id=env_id)
    else:
        check_split(env_id, split)  # type: ignore[arg-type]  # one of the two is given
    source = f"--tasks {tasks}" if tasks is not None else f"--split {split}"
    with warnings.catch_warnings():  # the import warnings are reported below, each once
        warnings.simplefilter("ignore")
        try:
            env = gym.make(
                env_id, **({"tasks": str(tasks)} if tasks is not None else {"split": split})
            )
        except UserInputError:
            raise
        except (ValueError, TypeError, KeyError) as err:
            text = str(err).strip()
            raise UserInputError(f"{source}: {text.splitlines()[0] if text else err!r}") from err
    skipped = tuple(getattr(env.unwrapped, "import_warnings", ()))
    try:
        all_tasks = env.unwrapped.tasks
        unreachable = []
        for index in range(len(all_tasks)):
            task = all_tasks[index]
            reason = check(env, task)
            if reason is not None:
                # a row's own id where it has one: what its author knows the row by
                named = f"row {task.row_id!r}, {task.id}" if task.row_id else task.id
                unreachable.append((index, named, task.prompt, reason))
        lines = _row_lines(tasks, len(all_tasks)) if tasks is not None and unreachable else None
        if lines is not None:  # a row's line in the file, as the load errors count it
            unreachable = [
                (index, f"line {lines[index]}, {named}", prompt, reason)
                for index, named, prompt, reason in unreachable
            ]
        return len(all_tasks), unreachable, skipped
    finally:
        env.close()


def _row_lines(path: Path, n_tasks: int) -> list[int] | None:
    """The file line (from 1) of each task of a JSONL task file, or None where they cannot be told.

    Why: a file's author finds a row by its line, as load errors name it (``mine.jsonl:5``), and
    the 0-based task index named a different row. A reader turns each non-blank line into one task,
    in order, so the k-th non-blank line is task k; where the counts differ (a folder, a JSON file,
    rows the reader skipped with a warning) no line is claimed.
    """
    if path.is_dir() or path.suffix.lower() != ".jsonl":
        return None
    from agentenv.engine.task_files import TaskSourceReads

    try:
        with TaskSourceReads(str(path)).open(path) as f:
            lines = [number for number, raw in enumerate(f, start=1) if raw.strip()]
    except (OSError, ValueError):
        return None
    return lines if len(lines) == n_tasks else None


def run(args: argparse.Namespace) -> int:
    """Print the unreachable tasks and a one-line count; exit status 1 if any."""
    from agentenv.terminal_text import terminal_text

    n, unreachable, skipped = check_tasks(args.env_id, args.tasks, split=args.split)
    # a row's question, id and import notes are the file's text: shown, never obeyed (an ESC
    # sequence or a \r in a question must not clear or overwrite the report)
    for warning in skipped:
        print(terminal_text(f"import: {warning}"))
    for index, task_id, prompt, reason in unreachable[: args.show]:
        first_line = prompt.strip().splitlines()[0] if prompt.strip() else ""
        print(terminal_text(f"task {index} ({task_id}): {first_line[:100]}"))
        print(terminal_text(f"  unreachable: {reason}"))
    if len(unreachable) > args.show:
        print(f"... and {len(unreachable) - args.show} more")
    print(
        f"{n - len(unreachable)} of {n} tasks reachable with the tools of {args.env_id}"
        + (
            f"; {len(skipped)} import warning(s) above (skipped or changed entries)"
            if skipped
            else ""
        )
    )
    return 1 if unreachable or skipped else 0
