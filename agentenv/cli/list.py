"""``agentenv list``: the registered env ids, family by family, with each family's splits, agents and presets.

Example:
    >>> from agentenv.evaluation.run_args import ArgumentParser
    >>> sub = ArgumentParser(prog="agentenv").add_subparsers(dest="command")
    >>> add_parser(sub).parse_args(["--family-module", "capitals.family"]).family_module
    ['capitals.family']
"""

from __future__ import annotations

import argparse
from typing import Any

from agentenv.errors import UserInputError

COMMAND = "list"
HELP = "list the registered env ids, family by family"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``list`` to an ``argparse`` sub-parser collection."""
    ls = sub.add_parser(COMMAND, help=HELP)
    ls.add_argument(
        "--family-module",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE first, to list a family kept outside agentenv (repeatable)",
    )
    return ls


def run(args: argparse.Namespace) -> int:
    """Print each family's ids with their one-line descriptions."""
    import importlib

    from agentenv.families import families

    for module in args.family_module:
        try:
            importlib.import_module(module)
        except ImportError as err:
            raise UserInputError(
                f"--family-module {module}: cannot import it ({err}); is it on PYTHONPATH?"
            ) from None
    for family in families():
        print(f"{family.name}:")
        for spec in family.envs:
            print(f"  {spec.id:38s} {spec.description}")
        for dialogue in family.dialogues:
            agents = " + ".join(dialogue.agents)
            print(f"  {dialogue.id:38s} (PettingZoo: {agents}) {dialogue.description}")
        print(f"  {'splits':38s} {', '.join(family.splits)}")
        if family.agents:
            print(f"  {'agents of its own':38s} {', '.join(family.agents)}")
        if family.reward_presets:
            print(f"  {'reward presets of its own':38s} {', '.join(family.reward_presets)}")
    return 0
