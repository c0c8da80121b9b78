"""``agentenv leaderboard RESULTS... --out DIR``: the command-line glue of the leaderboard.

``cli.py`` wires it in with ``leaderboard_cli.add_parser(sub)`` and, for the
``leaderboard`` command, ``return leaderboard_cli.run(args)``. RESULTS are run
directories written by ``agentenv eval --out`` (or their ``summary.json``
files), or any folder above them: ``agentenv leaderboard results/`` reads
every ``summary.json`` below ``results/``.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="agentenv")
    >>> add_parser(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["leaderboard", "results/a", "results/b", "--out", "board"])
    >>> args.command, [str(p) for p in args.results], str(args.out), args.no_plots, args.keep_failed
    ('leaderboard', ['results/a', 'results/b'], 'board', False, False)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agentenv.evaluation.run_args import out_path


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``leaderboard`` sub-command."""
    from agentenv.cli.help_format import HelpFormatter

    p = subparsers.add_parser(
        "leaderboard",
        formatter_class=HelpFormatter,
        help="compare eval results: Markdown table, HTML page and PNG plots",
        description="Read summary.json files, verify each run's episodes.jsonl against its row digests and "
        "its figures' ranges (naming the first bad file:line), refuse incomparable runs (corpus checksum, env "
        "version, split, custom task file vs split, fingerprint: system prompt, tool schemas, reward, grader "
        "version) and failed runs (more than half of the episodes ended in an agent failure), and write "
        "leaderboard.md, leaderboard.html and the plots. Runs written without row digests are shown, marked "
        "unverified.",
    )
    p.add_argument(
        "results",
        nargs="+",
        type=Path,
        metavar="RESULTS",
        help="run directories from `agentenv eval --out`, their summary.json, or a folder above them "
        "(every summary.json below it)",
    )
    p.add_argument("--out", type=out_path, default=Path("leaderboard"), help="output directory")
    p.add_argument("--title", default="agentenv leaderboard", help="page and table title")
    p.add_argument(
        "--no-plots", action="store_true", help="skip the PNG plots (no matplotlib needed)"
    )
    p.add_argument(
        "--keep-failed",
        action="store_true",
        help="show failed runs (more than half of the episodes ended in an agent failure, e.g. a dead "
        "endpoint) instead of refusing them; their episodes cell says how many failed",
    )


def run(args: argparse.Namespace) -> int:
    """Write the leaderboard; 2 with the reason on stderr when the results cannot share one."""
    from agentenv.evaluation.leaderboard import LeaderboardError, write_leaderboard
    from agentenv.terminal_text import terminal_text

    # every line names run folders and failure reasons of others' making: shown, never obeyed (a
    # folder named "run\x1b[2K\rwrote ..." must not overwrite the line it is printed on)
    if args.out.exists() and not args.out.is_dir():
        print(
            terminal_text(f"agentenv leaderboard: --out {args.out} is a file; give a folder"),
            file=sys.stderr,
        )
        return 2
    try:
        written = write_leaderboard(
            args.results,
            args.out,
            plots=not args.no_plots,
            title=args.title,
            keep_failed=getattr(args, "keep_failed", False),
        )
    except LeaderboardError as exc:
        print(terminal_text(f"agentenv leaderboard: {exc}"), file=sys.stderr)
        return 2
    except ImportError as exc:
        print(terminal_text(f"agentenv leaderboard: {exc}"), file=sys.stderr)
        return 2
    for path in written:
        print(terminal_text(f"wrote {path}"))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the command on its own: ``python -m agentenv.cli.leaderboard RESULTS... --out DIR``."""
    parser = argparse.ArgumentParser(prog="agentenv")
    add_parser(parser.add_subparsers(dest="command", required=True))
    return run(parser.parse_args(["leaderboard", *(sys.argv[1:] if argv is None else argv)]))


if __name__ == "__main__":
    sys.exit(main())
