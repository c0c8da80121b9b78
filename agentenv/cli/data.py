"""``agentenv data shift-check``: the command-line face of :func:`agentenv.data.shift_check.shift_check`.

The main ``agentenv`` parser calls :func:`add_parser` and hands the parsed
namespace to :func:`run`; ``python -m agentenv.cli.data shift-check A B``
runs it alone.

Example:
    >>> import argparse
    >>> sub = argparse.ArgumentParser().add_subparsers(dest="command")
    >>> _ = add_parser(sub)
    >>> args = sub.choices["data"].parse_args(["shift-check", "a.jsonl", "b.jsonl", "--seed", "3", "--json"])
    >>> args.data_command, str(args.a), args.seed, args.json
    ('shift-check', 'a.jsonl', 3, True)
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

COMMAND = "data"
SHIFT_CHECK = "shift-check"


def _add_shift_check(data_sub: Any) -> argparse.ArgumentParser:
    from agentenv.cli.help_format import HelpFormatter

    p = data_sub.add_parser(
        SHIFT_CHECK,
        help="how far task set B is from task set A (histograms, classifier AUC, MMD)",
        description="Compare two JSONL task sets (task rows or export-sft chat rows): kind and difficulty "
        "histograms with Jensen-Shannon divergence and total variation, a cross-fitted classifier "
        "two-sample test (out-of-fold AUC with a DeLong 95% CI; 0.5 means indistinguishable) and MMD^2 "
        "with a permutation p-value, beside the same classifier between two halves of A (split by its "
        "rows' 'group' when every row has one, as a split by group is) as a no-shift baseline. Run it "
        "before trusting a holdout set for data selection: "
        "the holdout must look like the test set.",
        formatter_class=HelpFormatter,
    )
    p.add_argument("a", type=Path, metavar="A", help="first JSONL file (e.g. the holdout set)")
    p.add_argument("b", type=Path, metavar="B", help="second JSONL file (e.g. the test set)")
    p.add_argument(
        "--seed",
        type=seed_number,
        default=0,
        help="seed of the subsampling, folds and permutations",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON instead of text")
    p.add_argument("--out", type=Path, metavar="FILE", help="also write the report as JSON to FILE")
    add_overwrite_flag(p, "--out")
    p.add_argument(
        "--permutations",
        type=count_of("permutations", 100_000),
        default=200,
        help="MMD permutations",
    )
    return p


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``data`` (with its ``shift-check`` sub-command) to an ``argparse`` sub-parser collection."""
    from agentenv.cli.help_format import HelpFormatter

    p = subparsers.add_parser(
        COMMAND,
        help="checks on task and SFT data sets (shift-check)",
        description="Checks on task and SFT data sets.",
        formatter_class=HelpFormatter,
    )
    data_sub = p.add_subparsers(dest="data_command", required=True, metavar="{shift-check}")
    _add_shift_check(data_sub)
    return p


def run(args: argparse.Namespace) -> int:
    """Run the check, print the report (text or ``--json``), write ``--out``; 0 on success."""
    from agentenv.data.shift_check import shift_check

    if args.data_command != SHIFT_CHECK:  # pragma: no cover - argparse allows only shift-check
        raise ValueError(f"unknown data command {args.data_command!r}")
    check_report_file(args.out, "--out", overwrite=args.overwrite, inputs=(args.a, args.b))
    report = shift_check(args.a, args.b, seed=args.seed, permutations=args.permutations)
    payload = report.to_dict()
    if args.out is not None:
        from agentenv.evaluation.run_dir import write_atomic

        write_atomic(args.out, json.dumps(payload, indent=2) + "\n")
    if args.json:
        print(json.dumps(payload, indent=2))
    else:
        print(report.format())
        if args.out is not None:
            print(f"\nwrote {terminal_text(args.out)}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agentenv.cli.data shift-check A B``; bad input exits 2 with a one-line error."""
    from agentenv.errors import UserInputError

    parser = argparse.ArgumentParser(prog="agentenv")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub)
    args = parser.parse_args([COMMAND, *(sys.argv[1:] if argv is None else argv)])
    try:
        return run(args)
    except UserInputError as err:
        print(f"agentenv: error: {terminal_text(err)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
