"""The ``agentenv`` command: evaluate agents, play an env by hand, serve retrieval.

Example:
    >>> parser = build_parser()
    >>> args = parser.parse_args(["eval", "MediaSearch-v0", "--agent", "oracle"])
    >>> args.split, args.episodes, args.env_arg  # None: 100 episodes, or one pass over a --tasks file
    ('test', None, [])
    >>> parse_env_args(["k=3", "presentation=lay", "max_turns=12", "flag=true"])
    {'k': 3, 'presentation': 'lay', 'max_turns': 12, 'flag': True}
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agentenv.errors import UserInputError

if TYPE_CHECKING:
    from agentenv.evaluation.runner import RunConfig, RunResult


def build_parser() -> argparse.ArgumentParser:
    """All sub-commands; each module adds its own arguments."""
    from agentenv import __version__
    from agentenv.help_format import plain

    parser = argparse.ArgumentParser(prog="agentenv", description=plain(__doc__.splitlines()[0]))
    parser.add_argument("--version", action="version", version=f"agentenv {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    ev = sub.add_parser("eval", help="evaluate an agent on an env id")
    ev.add_argument("env_id")
    ev.add_argument("--agent", required=True, help="agent name: random, oracle, bm25, llm, phenotype-ranker, or one registered with "
                    "agentenv.evaluation.agents.register_agent / the agentenv.agents entry-point group")
    ev.add_argument("--agent-args", nargs="*", default=[], metavar="K=V", help="agent keyword arguments")
    ev.add_argument("--split", default="test", choices=["train", "validation", "test", "casual"],
                    help="split to evaluate on; casual: MediaSearch's hand-written questions (default: %(default)s; "
                    "note gym.make and training default to train)")
    ev.add_argument("--episodes", type=int, default=None,
                    help=f"episodes to run (default: {DEFAULT_EPISODES}; with --tasks, one pass over its tasks); "
                    "more episodes than tasks repeats tasks")
    ev.add_argument("--seed", type=int, default=0, help="run seed (default: %(default)s)")
    ev.add_argument("--workers", type=int, default=1,
                    help="processes (default: %(default)s); results are identical for any value")
    ev.add_argument("--ray", metavar="local|auto|ADDRESS", default=None,
                    help="run the --workers on Ray actors: local (start Ray here), auto (the cluster this machine "
                    "joined) or the head's HOST:PORT; results are identical to a local run (default: none, local "
                    "processes; needs the ray extra)")
    ev.add_argument("--tasks", type=Path, help="your own tasks instead of the split: a JSONL file (one task per line), a phenopacket "
                    "JSON file, or a folder of phenopacket JSON files (rare-disease envs); one pass by "
                    "default; recorded as split 'custom' (default: none)")
    ev.add_argument("--reward", help="reward preset name or config file (default: the env's, strict)")
    ev.add_argument("--env-arg", action="append", default=[], metavar="KEY=VALUE",
                    help="keyword argument for gym.make, e.g. k=3, presentation=lay, max_turns=12 (repeatable; "
                    "VALUE is read as JSON when it parses, else as a string)")
    ev.add_argument("--out", type=Path, default=Path("results"),
                    help="run directory for summary.json and episodes.jsonl (default: %(default)s); "
                    "give each run its own, e.g. results/oracle, for `agentenv leaderboard results/`")
    ev.add_argument("--no-progress", action="store_true", help="no progress bar")

    play = sub.add_parser("play", help="play an env in the terminal",
                          description="Play one episode by hand: type `help` in the game for the input forms.")
    play.add_argument("env_id", help="a Gymnasium id (MediaSearch-v0) or a multi-agent id (DiagnosisDialogue-v0)")
    play.add_argument("--split", default="validation", choices=["train", "validation", "test", "casual"],
                      help="task split (default: %(default)s)")
    play.add_argument("--seed", type=int, default=None, help="task seed (default: a random task)")
    play.add_argument("--as", dest="side", metavar="AGENT", default=None,
                      help="multi-agent ids: the side you play, e.g. doctor or patient, assistant or user "
                           "(default: the lead); a scripted policy plays the other")

    ls = sub.add_parser("list", help="list the registered env ids, family by family")
    ls.add_argument("--family-module", action="append", default=[], metavar="MODULE",
                    help="import MODULE first, to list a family kept outside agentenv (repeatable)")

    from agentenv.data import cli as data_cli
    from agentenv.evaluation import leaderboard_cli
    from agentenv.judge import cli as judge_cli
    from agentenv.multiagent import cli as simulator_cli

    leaderboard_cli.add_parser(sub)
    from agentenv.evaluation import check_tasks as check_tasks_cli

    check_tasks_cli.add_parser(sub)
    data_cli.add_parser(sub)
    from agentenv.data import shift_cli

    shift_cli.add_parser(sub)
    simulator_cli.add_parser(sub)

    judge_cli.add_parser(sub)
    from agentenv.structured import reproduce_cli

    reproduce_cli.add_parser(sub)
    try:
        from agentenv.retrieval import serve_cli
    except ImportError:  # the retrieval server module is optional
        serve_cli = None
    if serve_cli is not None:
        serve_cli.add_parser(sub)
    return parser


DEFAULT_EPISODES = 100
"""``agentenv eval --episodes`` without ``--tasks``."""
_OWN_FLAGS = {"split": "--split", "tasks": "--tasks", "reward": "--reward"}


def parse_env_args(pairs: Sequence[str]) -> dict[str, object]:
    """``--env-arg KEY=VALUE`` pairs as gym.make kwargs: a VALUE that parses as JSON is that value, else a string."""
    out: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UserInputError(f"--env-arg expects KEY=VALUE, got {pair!r}")
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def env_kwarg_names(env_id: str) -> set[str] | None:
    """The keyword arguments ``gym.make(env_id, ...)`` accepts: the env class's ``__init__`` (and its
    bases' while they pass ``**kwargs`` on) plus the registered ones; ``None`` when it takes any."""
    import inspect

    import gymnasium as gym

    import agentenv  # noqa: F401 - registers the ids

    spec = gym.spec(env_id)
    creator = gym.envs.registration.load_env_creator(spec.entry_point) if isinstance(spec.entry_point, str) \
        else spec.entry_point
    names = set(spec.kwargs)
    for depth, cls in enumerate(inspect.getmro(creator) if inspect.isclass(creator) else [creator]):
        init = cls.__init__ if inspect.isclass(cls) else cls
        if init is object.__init__:
            break
        params = inspect.signature(init).parameters.values()
        # A base class's positional parameters (tasks, tools) are its subclass's to fill, not the user's.
        keyword, either = inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD
        kinds = (keyword, either) if depth == 0 else (keyword,)
        names |= {p.name for p in params if p.kind in kinds and p.name != "self"}
        if not any(p.kind == p.VAR_KEYWORD for p in params):
            return names
        if not inspect.isclass(creator):
            return None
    return names


def _check_env_args(env_id: str, env_args: dict[str, object]) -> None:
    for key in env_args:
        if key in _OWN_FLAGS:
            raise UserInputError(f"--env-arg {key}: use {_OWN_FLAGS[key]} instead")
    accepted = env_kwarg_names(env_id) if env_args else None
    if accepted is None:
        return
    unknown = sorted(set(env_args) - accepted)
    if unknown:
        shown = ", ".join(sorted(accepted - set(_OWN_FLAGS)))
        raise UserInputError(f"--env-arg {unknown[0]}: {env_id} takes no keyword {unknown[0]!r}; it accepts: {shown}")


def _key_values(pairs: Sequence[str]) -> tuple[tuple[str, str], ...]:
    out = []
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"--agent-args expects K=V pairs, got {pair!r}")
        out.append((key, value))
    return tuple(out)


def _eval(args: argparse.Namespace) -> int:
    from agentenv.evaluation.report import exit_code, format_table, summarize
    from agentenv.evaluation.runner import RunConfig, run, tasks_file_record

    if args.episodes is not None and args.episodes < 1:
        raise SystemExit("--episodes must be at least 1")
    from agentenv.families import family_of_env

    family_of_env(args.env_id)  # an unknown id is a one-line error that lists the registered ones
    env_kwargs = parse_env_args(args.env_arg)
    _check_env_args(args.env_id, env_kwargs)
    if args.tasks is not None:
        if not args.tasks.exists():
            raise SystemExit(f"--tasks {args.tasks}: no such file or directory")
        env_kwargs["tasks"] = str(args.tasks)
    if args.reward:
        env_kwargs["reward"] = args.reward
    episodes = args.episodes
    if episodes is None and args.tasks is None:
        episodes = DEFAULT_EPISODES  # with --tasks, None: one pass over the file's tasks
    config = RunConfig(
        env_id=args.env_id,
        agent=args.agent,
        split=args.split,
        episodes=episodes,
        seed=args.seed,
        workers=args.workers,
        agent_args=_key_values(args.agent_args),
        env_kwargs=tuple(sorted(env_kwargs.items())),
    )
    if args.ray is None:
        result = run(config, progress=not args.no_progress)
    else:
        result = _run_on_ray(config, args)
        if result is None:
            return INCOMPLETE_RUN_EXIT
    config, records = result.config, result.records
    meta = {**result.meta, "build_s": result.build_s, "loop_s": result.loop_s}
    if args.tasks is not None:
        meta["tasks_file"] = tasks_file_record(args.tasks)
    summary = summarize(config, records, result.wall_s, meta)
    if "distributed" in meta:
        summary = summary.model_copy(update={"backend": "ray", "distributed": meta["distributed"]})
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "summary.json").write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
    with (args.out / "episodes.jsonl").open("w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(format_table(summary))
    print(f"wrote {args.out / 'summary.json'} and {args.out / 'episodes.jsonl'}")
    return exit_code(summary)  # non-zero when most episodes ended in an agent failure


INCOMPLETE_RUN_EXIT = 4
"""Exit status of ``agentenv eval --ray`` when episodes are missing (workers died and retries ran out)."""


def _run_on_ray(config: RunConfig, args: argparse.Namespace) -> RunResult | None:
    """The run on Ray; None (after saying which episodes are missing) when it could not finish."""
    from agentenv.integrations.ray.evaluation import RunIncomplete, run_on_ray

    try:
        return run_on_ray(config, args.ray, progress=not args.no_progress)
    except RunIncomplete as err:
        args.out.mkdir(parents=True, exist_ok=True)
        partial = args.out / "episodes.partial.jsonl"
        with partial.open("w", encoding="utf-8") as f:
            for record in err.records:
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
        print(f"agentenv: error: {err}. The {len(err.records)} finished episodes are in {partial}; "
              "no summary.json was written", file=sys.stderr)
        return None


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

        return play(args.env_id, split=args.split, seed=args.seed, side=args.side)
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
    if args.command == "data":
        from agentenv.data.shift_cli import run as run_data

        return run_data(args)
    if args.command == "simulator-check":
        from agentenv.multiagent.cli import run as run_simulator_check

        return run_simulator_check(args)
    if args.command == "check-tasks":
        from agentenv.evaluation.check_tasks import run as run_check_tasks

        return run_check_tasks(args)
    if args.command == "leaderboard":
        from agentenv.evaluation.leaderboard_cli import run as run_leaderboard

        return run_leaderboard(args)
    if args.command == "reproduce":
        from agentenv.structured.reproduce_cli import run as run_reproduce

        return run_reproduce(args)
    if args.command == "judge-consistency":
        from agentenv.judge.cli import run

        return run(args)
    from agentenv.retrieval import serve_cli

    return serve_cli.run(args)


if __name__ == "__main__":
    sys.exit(main())
