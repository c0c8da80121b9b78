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


def check_module_name(module: str) -> str:
    """``module`` if it is a dotted module name (identifiers separated by dots), else a one-line
    :class:`UserInputError`.

    Why a grammar: ``importlib`` answers ``""`` with "Empty module name" and ``../x`` with a
    ``TypeError`` about a 'package' argument, neither naming the flag; a path or a file name is a
    common slip.

    Example:
        >>> check_module_name("capitals.family")
        'capitals.family'
        >>> check_module_name("../x")
        Traceback (most recent call last):
        ...
        agentenv.errors.UserInputError: --family-module '../x': not a module name; give a dotted Python module name (identifiers separated by dots), such as capitals.family, importable from PYTHONPATH; not a file path
    """
    if all(part.isidentifier() for part in module.split(".")):
        return module
    raise UserInputError(
        f"--family-module {module!r}: not a module name; give a dotted Python module name "
        "(identifiers separated by dots), such as capitals.family, importable from PYTHONPATH; "
        "not a file path"
    )


def import_family_module(module: str) -> None:
    """Import ``module`` (its families register as it is imported); any failure is one line
    naming it. Why every error type: the module is the user's code, and a ``RuntimeError`` or a
    ``SyntaxError`` in it said nothing of which ``--family-module`` raised it."""
    import importlib

    check_module_name(module)
    try:
        importlib.import_module(module)
    except ImportError as err:
        raise UserInputError(
            f"--family-module {module}: cannot import it ({err}); is it on PYTHONPATH?"
        ) from None
    except Exception as err:  # noqa: BLE001 - the user's module: whatever it raises, name it
        why = " ".join(f"{type(err).__name__}: {err}".split())
        raise UserInputError(
            f"--family-module {module}: importing it raised {why[:300]}; fix the module"
        ) from None


def run(args: argparse.Namespace) -> int:
    """Print each family's ids with their one-line descriptions."""
    from agentenv.families import families

    for module in args.family_module:
        import_family_module(module)
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
