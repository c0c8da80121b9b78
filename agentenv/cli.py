"""The ``agentenv`` command: evaluate agents, play an env by hand, serve retrieval.

Example:
    >>> parser = build_parser()
    >>> parser.parse_args(["eval", "MediaSearch-v0", "--agent", "oracle"]).episodes
    100
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    """All sub-commands; each module adds its own arguments."""
    parser = argparse.ArgumentParser(prog="agentenv", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    ev = sub.add_parser("eval", help="evaluate an agent on an env id")
    ev.add_argument("env_id")
    ev.add_argument("--agent", required=True, help="agent name: random, oracle, bm25, llm, phenotype-ranker, or one registered with "
                    "agentenv.evaluation.agents.register_agent / the agentenv.agents entry-point group")
    ev.add_argument("--agent-args", nargs="*", default=[], metavar="K=V", help="agent keyword arguments")
    ev.add_argument("--split", default="test", choices=["train", "validation", "test"])
    ev.add_argument("--episodes", type=int, default=100)
    ev.add_argument("--seed", type=int, default=0)
    ev.add_argument("--workers", type=int, default=1, help="processes; results are identical for any value")
    ev.add_argument("--tasks", type=Path, help="your own tasks file (JSONL) instead of the split")
    ev.add_argument("--reward", help="reward preset name or config file")
    ev.add_argument("--out", type=Path, default=Path("results"), help="output directory")
    ev.add_argument("--no-progress", action="store_true")

    play = sub.add_parser("play", help="play an env in the terminal")
    play.add_argument("env_id")
    play.add_argument("--split", default="validation")
    play.add_argument("--seed", type=int, default=None)

    ls = sub.add_parser("list", help="list the registered env ids, family by family")
    ls.add_argument("--family-module", action="append", default=[], metavar="MODULE",
                    help="import MODULE first, to list a family kept outside agentenv (repeatable)")

    from agentenv.data import cli as data_cli
    from agentenv.evaluation import leaderboard_cli
    from agentenv.judge import cli as judge_cli
    from agentenv.multiagent import cli as simulator_cli

    leaderboard_cli.add_parser(sub)
    data_cli.add_parser(sub)
    simulator_cli.add_parser(sub)

    judge_cli.add_parser(sub)
    try:
        from agentenv.retrieval import serve_cli
    except ImportError:  # the retrieval server module is optional
        serve_cli = None
    if serve_cli is not None:
        serve_cli.add_parser(sub)
    return parser


def _key_values(pairs: Sequence[str]) -> tuple[tuple[str, str], ...]:
    out = []
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"--agent-args expects K=V pairs, got {pair!r}")
        out.append((key, value))
    return tuple(out)


def _eval(args: argparse.Namespace) -> int:
    from agentenv.evaluation.report import format_table, summarize
    from agentenv.evaluation.runner import RunConfig, env_metadata, timed_run

    if args.episodes < 1:
        raise SystemExit("--episodes must be at least 1")
    from agentenv.families import family_of_env

    family_of_env(args.env_id)  # an unknown id is a one-line error that lists the registered ones
    env_kwargs: dict[str, object] = {}
    if args.tasks is not None:
        if not args.tasks.exists():
            raise SystemExit(f"--tasks {args.tasks}: no such file or directory")
        env_kwargs["tasks"] = str(args.tasks)
    if args.reward:
        env_kwargs["reward"] = args.reward
    config = RunConfig(
        env_id=args.env_id,
        agent=args.agent,
        split=args.split,
        episodes=args.episodes,
        seed=args.seed,
        workers=args.workers,
        agent_args=_key_values(args.agent_args),
        env_kwargs=tuple(sorted(env_kwargs.items())),
    )
    records, wall = timed_run(config, progress=not args.no_progress)
    summary = summarize(config, records, wall, env_metadata(config))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "summary.json").write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
    with (args.out / "episodes.jsonl").open("w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(format_table(summary))
    print(f"wrote {args.out / 'summary.json'} and {args.out / 'episodes.jsonl'}")
    return 0


def data_cli_run(args: argparse.Namespace) -> int:
    """``agentenv export-sft``: imported lazily, like every sub-command."""
    from agentenv.data.cli import run

    return run(args)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``agentenv`` console script.

    An unwritable cache location or bad user input (``UserInputError``) is a
    setup problem, not a bug: it is shown as its one-line fix, without a
    traceback, with exit code 2.
    """
    from agentenv.errors import UserInputError
    from agentenv.paths import CacheNotWritableError

    try:
        return _main(argv)
    except (CacheNotWritableError, UserInputError) as err:
        print(f"agentenv: error: {err}", file=sys.stderr)
        return 2


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "eval":
        return _eval(args)
    if args.command == "play":
        from agentenv.play import play

        return play(args.env_id, split=args.split, seed=args.seed)
    if args.command == "list":
        import importlib

        from agentenv.families import families

        for module in args.family_module:
            importlib.import_module(module)
        for family in families():
            print(f"{family.name}:")
            for spec in family.envs:
                print(f"  {spec.id:38s} {spec.description}")
            for dialogue in family.dialogues:
                agents = " + ".join(dialogue.agents)
                print(f"  {dialogue.id:38s} (PettingZoo: {agents}) {dialogue.description}")
        return 0
    if args.command == "export-sft":
        return data_cli_run(args)
    if args.command == "simulator-check":
        from agentenv.multiagent.cli import run as run_simulator_check

        return run_simulator_check(args)
    if args.command == "leaderboard":
        from agentenv.evaluation.leaderboard_cli import run as run_leaderboard

        return run_leaderboard(args)
    if args.command == "judge-consistency":
        from agentenv.judge.cli import run

        return run(args)
    from agentenv.retrieval import serve_cli

    return serve_cli.run(args)


if __name__ == "__main__":
    sys.exit(main())
