"""``agentenv play``: the command-line face of :func:`agentenv.play.session.play`.

Kept apart from :mod:`agentenv.play.session` so that ``agentenv --help`` lists the
command without importing the game (Gymnasium, the renderer).

Example:
    >>> from agentenv.evaluation.run_args import ArgumentParser
    >>> sub = ArgumentParser(prog="agentenv").add_subparsers(dest="command")
    >>> play = add_parser(sub)
    >>> play.parse_args(["DiagnosisDialogue-v0", "--as", "doctor"]).side
    'doctor'
    >>> play.parse_args(["MediaSearch-v0", "--tasks", "mine.jsonl"]).tasks
    PosixPath('mine.jsonl')
"""

from __future__ import annotations

import argparse
from typing import Any

from agentenv.evaluation.run_args import add_split_argument, seed_number, tasks_path

COMMAND = "play"
HELP = "play an env in the terminal"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``play`` to an ``argparse`` sub-parser collection."""
    play = sub.add_parser(
        COMMAND,
        help=HELP,
        description="Play one episode by hand: type `help` in the game for the input forms.",
    )
    play.add_argument(
        "env_id", help="a Gymnasium id (MediaSearch-v0) or a multi-agent id (DiagnosisDialogue-v0)"
    )
    add_split_argument(play, "validation", "task split", "not read with --tasks")
    play.add_argument(
        "--tasks",
        type=tasks_path,
        help="your own tasks instead of the split, to try a file by hand before `agentenv eval "
        "--tasks` runs on it: a JSONL file (one task per line), a phenopacket JSON file, or a folder "
        "of phenopacket JSON files (rare-disease envs) (default: none)",
    )
    play.add_argument(
        "--seed",
        type=seed_number,
        default=None,
        help="task seed, picking a task of the split or of --tasks (default: a random task)",
    )
    play.add_argument(
        "--as",
        dest="side",
        metavar="AGENT",
        default=None,
        help="multi-agent ids: the side you play, e.g. doctor or patient, assistant or user "
        "(default: the lead); a scripted policy plays the other",
    )
    return play


def run(args: argparse.Namespace) -> int:
    """Play one episode."""
    from agentenv.evaluation.run_args import check_split
    from agentenv.play.session import play

    check_split(args.env_id, args.split)  # checked with --tasks too, as agentenv eval does
    return play(args.env_id, split=args.split, seed=args.seed, side=args.side, tasks=args.tasks)
