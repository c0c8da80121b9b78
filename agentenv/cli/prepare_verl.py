"""``agentenv prepare-verl``: write verl's (or, with ``--trainer skyrl``, SkyRL's) parquet rows for an env id's split or task file.

The rows are ``agentenv eval``'s episodes for the same ``--split``/``--tasks``, ``--seed`` and
``--episodes``: the same tasks in the same order, reset with the same seeds.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentenv.errors import UserInputError
from agentenv.evaluation.run_args import (
    MAX_EPISODES,
    add_split_argument,
    count_of,
    out_path,
    seed_number,
    tasks_path,
)
from agentenv.terminal_text import terminal_text

COMMAND = "prepare-verl"
HELP = "write verl's training rows (parquet) for an env id's split or task file"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``prepare-verl`` to an ``argparse`` sub-parser collection."""
    p = sub.add_parser(COMMAND, help=HELP)
    p.add_argument("env_id")
    add_split_argument(
        p, "train", "split to write", "write the validation split for verl's val_files"
    )
    p.add_argument(
        "--tasks",
        type=tasks_path,
        help="your own tasks instead of the split (as agentenv eval --tasks)",
    )
    p.add_argument(
        "--episodes",
        type=count_of("episodes", MAX_EPISODES),
        default=None,
        help="rows to write (default: one pass over the tasks); more than tasks repeats tasks",
    )
    p.add_argument(
        "--seed",
        type=row_seed,
        default=0,
        help="run seed, as agentenv eval --seed, up to 2**63-1 (rows store it as int64) "
        "(default: %(default)s)",
    )
    p.add_argument(
        "--env-arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="keyword argument for gym.make, as agentenv eval --env-arg (repeatable)",
    )
    p.add_argument(
        "--agent-loop",
        default="agentenv",
        choices=["agentenv", "agentenv_qwen3"],
        help="agent_name of the rows: agentenv renders env turns with the model tokenizer's chat "
        "template, agentenv_qwen3 with agentenv's offline Qwen3 format (default: %(default)s)",
    )
    p.add_argument(
        "--trainer",
        default="verl",
        choices=["verl", "skyrl"],
        help="row format: verl's (agent_name, reward_model) or SkyRL's (env_class, reward_spec); "
        "both carry the episode in extra_info (default: %(default)s)",
    )
    p.add_argument(
        "--out",
        type=out_path,
        required=True,
        help="parquet file to write (an existing one is refused)",
    )
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    return p


def row_seed(text: str) -> int:
    """``--seed``'s argparse type: ``agentenv eval``'s seed (:func:`seed_number`) that a row can store.

    Why: eval takes any seed from 0, but a row stores its reset seed as int64; 2**63 failed with
    OverflowError (exit 1) only after every row was built.

    Example:
        >>> row_seed("7")
        7
        >>> row_seed(str(2**63))
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: a seed of verl rows is a whole number from 0 to 9223372036854775807 (int64), got '9223372036854775808'
    """
    from agentenv.integrations.verl.rows import ROW_SEED_MAX

    seed = seed_number(text)
    if seed > ROW_SEED_MAX:
        raise argparse.ArgumentTypeError(
            f"a seed of verl rows is a whole number from 0 to {ROW_SEED_MAX} (int64), got {text!r}"
        )
    return seed


def run(args: argparse.Namespace) -> int:
    """Write the rows to a temporary file beside ``--out`` and rename it into place, after checking
    ``--out``, the env, its kwargs, the task source and the seeds the rows will hold."""
    from agentenv.integrations.row_episodes import EnvPool
    from agentenv.integrations.verl.rows import parquet_modules

    parquet_modules()  # no pyarrow: one line naming the extra, before any work
    if args.episodes is not None and args.episodes < 1:
        raise UserInputError(f"--episodes must be at least 1, got {args.episodes}")
    if args.out.suffix != ".parquet":
        raise UserInputError(f"--out must name a .parquet file, got {args.out}")
    _check_out(args)
    if args.episodes is not None:
        _check_seeds(args.seed, args.episodes)
    specs = _episode_specs(args)
    _check_seeds(args.seed, len(specs))  # one pass over the tasks: known only now
    pool = EnvPool()
    n = _write_rows(args, _rows(args, specs, pool))
    print(
        terminal_text(
            f"wrote {n} rows of {args.env_id} ({'tasks ' + str(args.tasks) if args.tasks else args.split}, "
            f"seed {args.seed}) to {args.out}"
        )
    )
    return 0


def _episode_specs(args: argparse.Namespace) -> list[Any]:
    """``agentenv eval``'s episodes for the arguments, the env, its kwargs and the task source
    checked first (each a one-line error)."""
    from agentenv.evaluation.run_args import (
        check_env_args,
        check_split,
        check_tasks_path,
        env_spec,
        parse_env_args,
    )
    from agentenv.integrations.row_episodes import episode_specs

    env_spec(args.env_id)
    check_split(args.env_id, args.split)
    env_kwargs = parse_env_args(args.env_arg)
    check_env_args(args.env_id, env_kwargs)
    if args.tasks is not None:
        check_tasks_path(args.tasks, env_id=args.env_id)
        env_kwargs["tasks"] = str(args.tasks.resolve())
    try:
        return episode_specs(
            args.env_id,
            split=args.split,
            episodes=args.episodes,
            seed=args.seed,
            env_kwargs=env_kwargs,
        )
    except (ValueError, TypeError) as err:  # the env refused its kwargs: user input, one line
        raise UserInputError(
            f"{args.env_id} ({', '.join(args.env_arg) or 'no --env-arg'}): {err}"
        ) from err


def _rows(args: argparse.Namespace, specs: list[Any], pool: Any) -> Iterator[dict[str, Any]]:
    """The rows of ``--trainer``'s format, built one by one as the writer asks."""
    from agentenv.integrations.verl.rows import skyrl_row, verl_row

    for spec in specs:
        if args.trainer == "skyrl":
            yield skyrl_row(spec, pool)
        else:
            yield verl_row(spec, pool, agent_loop=args.agent_loop)


def _write_rows(args: argparse.Namespace, rows: Iterator[dict[str, Any]]) -> int:
    """Write the rows to a fresh temporary file beside ``--out``, check ``--out`` again and rename
    the file into place: ``--out`` is the whole old file or the whole new one, and the temporary
    file is removed on any failure (it used to be a fixed ``.NAME.partial`` name, replaced if the
    user had such a file, and left behind by an error)."""
    from agentenv.integrations.verl.rows import write_parquet
    from agentenv.storage.paths import normal_mode

    args.out.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=args.out.parent, prefix=f".{args.out.name}.", suffix=".partial")
    staged = Path(name)
    try:
        os.fchmod(fd, normal_mode())  # as a plain open() leaves it, not mkstemp's 0600
        os.close(fd)
        n = write_parquet(rows, staged)
        _check_out(args)  # again: what appeared at --out meanwhile is the user's
        os.replace(staged, args.out)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
    return n


def _check_seeds(seed: int, episodes: int) -> None:
    """Refuse a ``--seed`` whose last episode's reset seed (``seed + episodes - 1``) no row can store."""
    from agentenv.integrations.verl.rows import ROW_SEED_MAX

    if seed + episodes - 1 > ROW_SEED_MAX:
        raise UserInputError(
            f"--seed {seed}: episode {episodes - 1} would reset with seed {seed + episodes - 1}, "
            f"past the largest a row stores ({ROW_SEED_MAX}, int64); give --seed at most "
            f"{ROW_SEED_MAX - episodes + 1}"
        )


def _check_out(args: argparse.Namespace) -> None:
    """Refuse, in one line, an --out that would lose work or cannot be written: one under a file,
    an input (resolved, links followed), anything but a plain file (a folder, a link, a FIFO, a
    device), an existing file without ``--overwrite``, and with it a file that holds no rows of
    this command (``--overwrite`` replaces a previous output, never anything else)."""
    from agentenv.data.export_files import refuse_out_node, refuse_out_over_inputs
    from agentenv.integrations.verl.rows import holds_rows

    out = args.out
    for parent in out.parents:
        if parent.exists() and not parent.is_dir():
            raise UserInputError(
                f"--out {out}: {parent} is a file, not a folder; name a path under a folder"
            )
    refuse_out_over_inputs(out, {"--tasks": args.tasks})
    if out.is_dir() and not out.is_symlink():
        raise UserInputError(f"--out {out} is a folder; name a .parquet file")
    refuse_out_node(out, "file")
    if not out.exists():
        return
    if not args.overwrite:
        raise UserInputError(
            f"--out {out} exists: pass --overwrite to replace it, or name another file"
        )
    if not holds_rows(out):
        raise UserInputError(
            f"--out {out} holds no rows of prepare-verl (no parquet file with "
            "data_source, prompt and extra_info); --overwrite replaces only those: name another file"
        )
