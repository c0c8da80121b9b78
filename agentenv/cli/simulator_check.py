"""``agentenv simulator-check``: the simulator validity report from the command line.

The lead wires it into ``agentenv/cli/main.py`` with ``add_parser(sub)`` and, for
``args.command == "simulator-check"``, ``run(args)``.

Example:
    >>> import argparse
    >>> sub = argparse.ArgumentParser(prog="agentenv").add_subparsers(dest="command")
    >>> add_parser(sub).parse_args(["--env", "MediaConcierge-v0", "--dialogues", "5"]).policy
    'scripted'
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentenv.cli.limit_flags import MAX_LIMIT
from agentenv.cli.report_file import add_overwrite_flag, check_report_file
from agentenv.errors import UserInputError
from agentenv.evaluation.run_args import count_of, key_values, seed_number
from agentenv.terminal_text import terminal_text

COMMAND = "simulator-check"

_LLM_NUMBERS = {"timeout_s": True, "backoff_s": False, "temperature": False}
"""The llm agent's number knobs, each with whether 0 is refused (a timeout must be above 0).

Why here: the agent's own check (``<= 0``) lets NaN through (its first request failed with
"Invalid value NaN"), and ``1e18`` seconds overflowed the socket's timer."""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``simulator-check`` sub-command to an ``add_subparsers()`` object."""
    from agentenv.cli.help_format import HelpFormatter
    from agentenv.multiagent.registry import env_ids

    p = subparsers.add_parser(
        COMMAND,
        help="truthfulness and leakage of a patient/user simulator",
        description="Run N probe dialogues against a simulator and report truthfulness and leakage.",
        formatter_class=HelpFormatter,
    )
    p.add_argument("--env", required=True, choices=env_ids(), help="multi-agent env id")
    p.add_argument("--side", help="the simulated agent (default: the env's: patient or user)")
    p.add_argument(
        "--policy",
        default="scripted",
        choices=["scripted", "llm"],
        help="who plays that side: the env's scripted simulator or an LLM endpoint",
    )
    p.add_argument(
        "--agent-args",
        nargs="*",
        default=[],
        metavar="K=V",
        help="llm agent arguments, e.g. base_url=http://127.0.0.1:8000 model=Qwen/Qwen3-8B",
    )
    p.add_argument(
        "--strict-format",
        action="store_true",
        help="do not wrap an llm reply without <say> tags into one (count it as unreadable)",
    )
    p.add_argument(
        "--dialogues",
        type=count_of("dialogues", 100_000),
        default=50,
        help="probe dialogues to run",
    )
    p.add_argument(
        "--split",
        default="test",
        choices=["train", "validation", "test"],
        help="split whose tasks the dialogues use",
    )
    p.add_argument("--seed", type=seed_number, default=0, help="seed of the first dialogue")
    p.add_argument("--json", type=Path, help="also write the report as JSON here")
    add_overwrite_flag(p, "--json")
    return p


def _agent_args(pairs: Sequence[str]) -> dict[str, str]:
    """``--agent-args`` as keywords for the llm agent; a bad pair or number is one line (exit 2)."""
    out = dict(key_values(pairs))
    for key, above_zero in _LLM_NUMBERS.items():
        if key in out:
            _check_number(key, out[key], above_zero=above_zero)
    return out


def _check_number(key: str, text: str, *, above_zero: bool) -> None:
    """Refuse ``key=text`` unless it is a number from 0 (above 0 with ``above_zero``) to ``MAX_LIMIT``."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    low_ok = value > 0 if above_zero else value >= 0
    if not (low_ok and value <= MAX_LIMIT):  # NaN fails both
        low = "above 0" if above_zero else "from 0"
        raise UserInputError(
            f"--agent-args {key} must be a number {low} to {MAX_LIMIT:g}, got {text!r}"
        )


def run(args: argparse.Namespace) -> int:
    """Build the env and the policy, print the report (and write it as JSON); 0 on success."""
    from agentenv.multiagent.policy_helpers import SayWrapper
    from agentenv.multiagent.registry import make
    from agentenv.multiagent.simulator_check import simulator_check

    if args.dialogues < 1:
        raise UserInputError("--dialogues must be at least 1")
    if args.agent_args and args.policy != "llm":
        raise UserInputError("--agent-args applies to --policy llm only")
    agent_args = _agent_args(args.agent_args)
    check_report_file(args.json, "--json", overwrite=args.overwrite)
    env = make(args.env, split=args.split)
    side = env.other if args.side is None else args.side  # "" is a side named wrongly, not none
    if side != env.other:
        raise UserInputError(
            f"--side: {args.env} simulates the {env.other!r} side, not {side!r} "
            f"(give --side {env.other} or leave it out)"
        )
    policy: Any = None
    if args.policy == "llm":
        from agentenv.evaluation.agents import make_agent

        try:
            policy = make_agent("llm", **agent_args)
        except (TypeError, ValueError) as exc:
            raise UserInputError(f"--agent-args: {exc}") from None
        if not args.strict_format:
            policy = SayWrapper(policy)
    from agentenv.evaluation.agents import AgentFailure

    try:
        report = simulator_check(
            env,
            side=side,
            policy=policy,
            dialogues=args.dialogues,
            seed=args.seed,
            policy_name=args.policy,
        )
    except AgentFailure as err:  # a dead or broken endpoint: its one-line reason names the URL
        print(  # the reason may quote the server's reply: its control characters are shown, not obeyed
            terminal_text(
                f"agentenv: error: simulator-check: {err.reason}; check that the server is up at "
                "that address (or pass --agent-args base_url=...)"
            ),
            file=sys.stderr,
        )
        return 2
    print(report.format())
    if args.json is not None:
        from agentenv.evaluation.run_dir import write_atomic

        write_atomic(args.json, json.dumps(report.to_dict(), indent=2) + "\n")
        print(terminal_text(f"wrote {args.json}"))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the sub-command on its own: ``python -m agentenv.cli.simulator_check --env ...``."""
    parser = argparse.ArgumentParser(prog="agentenv")
    sub = parser.add_subparsers(dest="command")
    add_parser(sub)
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        return run(parser.parse_args([COMMAND, *args]))
    except UserInputError as err:  # `agentenv simulator-check` prints it as one line, exit 2
        raise SystemExit(f"agentenv: error: {err}") from None


if __name__ == "__main__":
    sys.exit(main())
