"""``agentenv prepare-verl``: write verl's (or, with ``--trainer skyrl``, SkyRL's) parquet rows for an env id's split or task file.

The rows are ``agentenv eval``'s episodes for the same ``--split``/``--tasks``, ``--seed`` and
``--episodes``: the same tasks in the same order, reset with the same seeds.
"""

from __future__ import annotations

import argparse
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
        type=seed_number,
        default=0,
        help="run seed, as agentenv eval --seed (default: %(default)s)",
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


def run(args: argparse.Namespace) -> int:
    from agentenv.evaluation.run_args import (
        check_env_args,
        check_split,
        check_tasks_path,
        env_spec,
        parse_env_args,
    )
    from agentenv.integrations.row_episodes import EnvPool, episode_specs
    from agentenv.integrations.verl.rows import skyrl_row, verl_row, write_parquet

    if args.episodes is not None and args.episodes < 1:
        raise UserInputError(f"--episodes must be at least 1, got {args.episodes}")
    if args.out.suffix != ".parquet":
        raise UserInputError(f"--out must name a .parquet file, got {args.out}")
    _check_out(args.out, overwrite=args.overwrite)
    env_spec(args.env_id)
    check_split(args.env_id, args.split)
    env_kwargs = parse_env_args(args.env_arg)
    check_env_args(args.env_id, env_kwargs)
    if args.tasks is not None:
        check_tasks_path(args.tasks, env_id=args.env_id)
        env_kwargs["tasks"] = str(args.tasks.resolve())
    try:
        specs = episode_specs(
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
    pool = EnvPool()
    if args.trainer == "skyrl":
        rows = (skyrl_row(s, pool) for s in specs)
    else:
        rows = (verl_row(s, pool, agent_loop=args.agent_loop) for s in specs)
    staged = args.out.with_name(f".{args.out.name}.partial")
    n = write_parquet(rows, staged)
    staged.replace(
        args.out
    )  # whole or not at all: an interrupted write never leaves a half file at --out
    print(
        terminal_text(
            f"wrote {n} rows of {args.env_id} ({'tasks ' + str(args.tasks) if args.tasks else args.split}, "
            f"seed {args.seed}) to {args.out}"
        )
    )
    return 0


def _check_out(out: Path, *, overwrite: bool) -> None:
    """Refuse, in one line, an --out that would lose work or cannot be written."""
    for parent in out.parents:
        if parent.exists() and not parent.is_dir():
            raise UserInputError(
                f"--out {out}: {parent} is a file, not a folder; name a path under a folder"
            )
    if out.is_dir():
        raise UserInputError(f"--out {out} is a folder; name a .parquet file")
    if out.exists() and not overwrite:
        raise UserInputError(
            f"--out {out} exists: pass --overwrite to replace it, or name another file"
        )
