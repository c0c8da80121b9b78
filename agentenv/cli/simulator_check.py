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

from agentenv.cli.report_file import add_overwrite_flag, check_report_file
from agentenv.evaluation.run_args import count_of, seed_number
from agentenv.terminal_text import terminal_text

COMMAND = "simulator-check"


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


def _key_values(pairs: Sequence[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"--agent-args expects K=V pairs, got {pair!r}")
        out[key] = value
    return out


def run(args: argparse.Namespace) -> int:
    """Build the env and the policy, print the report (and write it as JSON); 0 on success."""
    from agentenv.multiagent.policy_helpers import SayWrapper
    from agentenv.multiagent.registry import make
    from agentenv.multiagent.simulator_check import simulator_check

    if args.dialogues < 1:
        raise SystemExit("--dialogues must be at least 1")
    check_report_file(args.json, "--json", overwrite=args.overwrite)
    env = make(args.env, split=args.split)
    side = args.side or env.other
    if side != env.other:
        raise SystemExit(f"--side: {args.env} simulates the {env.other!r} side, not {side!r}")
    policy: Any = None
    if args.policy == "llm":
        from agentenv.evaluation.agents import make_agent

        try:
            policy = make_agent("llm", **_key_values(args.agent_args))
        except (TypeError, ValueError) as exc:
            raise SystemExit(f"--agent-args: {exc}") from None
        if not args.strict_format:
            policy = SayWrapper(policy)
    elif args.agent_args:
        raise SystemExit("--agent-args applies to --policy llm only")
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
    return run(parser.parse_args([COMMAND, *args]))


if __name__ == "__main__":
    sys.exit(main())
