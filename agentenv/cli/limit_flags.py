"""A server's limits as command-line flags: one flag per field of its limits dataclass.

Why: ``serve-env`` and ``serve-retrieval`` each expose a frozen limits record; the flags, their
types, defaults and help come from the record itself, so a new field needs one line in the
flag table and nothing else, and ``--help`` always shows the record's real default.

Example:
    >>> import argparse, dataclasses
    >>> @dataclasses.dataclass(frozen=True)
    ... class Limits:
    ...     max_k: int = 50
    ...     idle_timeout_s: float = 60.0
    >>> flags = {"max-k": "max_k", "idle-timeout": "idle_timeout_s"}
    >>> parser = argparse.ArgumentParser()
    >>> add_limit_flags(parser, flags, Limits())
    >>> limits_from_flags(parser.parse_args(["--max-k", "7"]), flags, Limits())
    Limits(max_k=7, idle_timeout_s=60.0)
    >>> limits_from_flags(parser.parse_args(["--max-k", "0"]), flags, Limits(), positive=True)
    Traceback (most recent call last):
    ...
    agentenv.errors.UserInputError: --max-k must be positive, got 0
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar

from agentenv.errors import UserInputError

LimitsT = TypeVar("LimitsT")


def add_limit_flags(
    parser: argparse.ArgumentParser,
    flags: Mapping[str, str],
    defaults: Any,
    *,
    show_default: bool = True,
) -> None:
    """One ``--FLAG`` per ``flags`` entry (flag name → field of ``defaults``), typed by its default."""
    record = type(defaults).__name__
    for flag, field in flags.items():
        value = getattr(defaults, field)
        shown = f"{record}.{field} (default: {value})" if show_default else f"{record}.{field}"
        parser.add_argument(
            f"--{flag}",
            type=type(value),
            default=value,
            dest=field,
            metavar=type(value).__name__.upper(),
            help=shown,
        )


def limits_from_flags(
    args: argparse.Namespace, flags: Mapping[str, str], defaults: LimitsT, *, positive: bool = False
) -> LimitsT:
    """``defaults`` with the flags' values; with ``positive``, a value ≤ 0 is one line naming its flag."""
    values = {field: getattr(args, field) for field in flags.values()}
    if positive:
        for flag, field in flags.items():
            if values[field] <= 0:
                raise UserInputError(f"--{flag} must be positive, got {values[field]}")
    return dataclasses.replace(defaults, **values)  # type: ignore[type-var]
