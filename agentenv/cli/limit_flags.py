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
    >>> limits_from_flags(parser.parse_args(["--idle-timeout", "nan"]), flags, Limits())
    Traceback (most recent call last):
    ...
    agentenv.errors.UserInputError: --idle-timeout must be a number, got nan
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from agentenv.errors import UserInputError
from agentenv.evaluation.run_args import whole_number_in

LimitsT = TypeVar("LimitsT")

MAX_LIMIT = 1e9
"""The largest value a limit flag takes: beyond it a timeout or count is a typo (``inf`` seconds
overflowed the event loop's timer), not a setting."""

MAX_PROCESSES = 256
"""The most server processes one ``--workers`` or ``--fronts`` flag starts: each takes a core under
load, so more than the machine's cores only adds memory; ``10**18`` ran out of memory (serve-env)
or of open files (serve-retrieval, after it had printed "listening on")."""


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
    for flag, field in flags.items():
        value = values[field]
        if value != value:  # NaN passes every comparison below: a timer of NaN never fired
            raise UserInputError(f"--{flag} must be a number, got {value}")
        if positive and value <= 0:
            raise UserInputError(f"--{flag} must be positive, got {value}")
        if not 0 <= value <= MAX_LIMIT:
            raise UserInputError(f"--{flag} must be a number from 0 to {MAX_LIMIT:g}, got {value}")
    try:
        return dataclasses.replace(defaults, **values)  # type: ignore[type-var]
    except ValueError as err:  # the record's own check: name the flag, not the field
        named = {f"{type(defaults).__name__}.{field}": f"--{flag}" for flag, field in flags.items()}
        message = str(err)
        for field_name, flag in named.items():
            message = message.replace(field_name, flag)
        raise UserInputError(message) from None


def port_number(text: str) -> int:
    """``--port``'s type: a TCP port, 0 to 65535 (0: any free port), refused before any work.

    >>> port_number("8700")
    8700
    >>> port_number("99999")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: a TCP port is 0 to 65535, got 99999
    """
    port = whole_number_in(text, 0, 65535)
    if port is None:
        shown = text.strip() if text.strip().lstrip("-").isdigit() else repr(text)
        raise argparse.ArgumentTypeError(f"a TCP port is 0 to 65535, got {shown}")
    return port


def positive_int(text: str) -> int:
    """A count of at least 1 (``--workers``), refused before any work.

    >>> positive_int("2")
    2
    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a whole number of at least 1, got '0'
    """
    value = whole_number_in(text, 1)
    if value is None:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def process_count(text: str) -> int:
    """A count of server processes, 1 to :data:`MAX_PROCESSES` (``--workers``), refused before any work.

    >>> process_count("2")
    2
    >>> process_count("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a whole number of at least 1, got '0' (1 to 256 processes)
    >>> process_count("1000000000000000000")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected at most 256 processes (1 to 256), got '1000000000000000000'
    """
    value = whole_number_in(text, 1)
    if value is None:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of at least 1, got {text!r} (1 to {MAX_PROCESSES} processes)"
        )
    if value > MAX_PROCESSES:
        raise argparse.ArgumentTypeError(
            f"expected at most {MAX_PROCESSES} processes (1 to {MAX_PROCESSES}), got {text!r}"
        )
    return value


def check_process_count(flag: str, value: int) -> None:
    """Refuse a ``flag`` count of processes outside 1 to :data:`MAX_PROCESSES`, in one line.

    >>> check_process_count("--fronts", 300)
    Traceback (most recent call last):
    ...
    agentenv.errors.UserInputError: --fronts must be from 1 to 256 processes, got 300
    """
    if value < 1:
        raise UserInputError(f"{flag} must be positive, got {value}")
    if value > MAX_PROCESSES:
        raise UserInputError(f"{flag} must be from 1 to {MAX_PROCESSES} processes, got {value}")


def host_address(text: str) -> str:
    """``--host``'s type: an interface name or address, where an empty one is an error.

    Why: the socket layer reads ``""`` as every interface (0.0.0.0), and these servers have no
    authentication; binding them beyond loopback must be spelt out (``--host 0.0.0.0``, which
    they log a warning for), never the result of an empty variable in a script.

    >>> host_address("127.0.0.1")
    '127.0.0.1'
    >>> host_address("")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: an empty host binds every interface, and the server has no authentication; give 127.0.0.1 (loopback, the default) or an address of this machine
    """
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "an empty host binds every interface, and the server has no authentication; "
            "give 127.0.0.1 (loopback, the default) or an address of this machine"
        )
    return text


def number_in(low: float, high: float) -> Callable[[str], float]:
    """An argparse type for a finite number from ``low`` to ``high``.

    >>> number_in(0.0, 1.0)("0.05")
    0.05
    >>> number_in(0.0, 1.0)("nan")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a number from 0 to 1, got 'nan'
    """

    def number(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not low <= value <= high:  # NaN fails too
            raise argparse.ArgumentTypeError(
                f"expected a number from {low:g} to {high:g}, got {text!r}"
            )
        return value

    return number


def non_negative_int(text: str) -> int:
    """A count from 0 (``--max-restarts``), refused before any work.

    >>> non_negative_int("0")
    0
    >>> non_negative_int("-1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a whole number from 0, got '-1'
    """
    value = whole_number_in(text, 0)
    if value is None:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0, got {text!r}")
    return value


def http_url(host: str, port: int) -> str:
    """The URL a server on ``host:port`` answers at (an IPv6 address in brackets).

    >>> http_url("127.0.0.1", 8700), http_url("::1", 8700)
    ('http://127.0.0.1:8700', 'http://[::1]:8700')
    """
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
