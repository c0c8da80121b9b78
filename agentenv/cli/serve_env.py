"""``agentenv serve-env --protocol verl-tool|openenv ENV_ID``: serve one env id to a trainer's own client.

Every user mistake (an unknown id, a bad ``--env-arg``, a limit that is not
positive, a port out of range) is one line and exit 2, before anything is
built or bound.

Example:
    >>> from agentenv.evaluation.run_args import ArgumentParser
    >>> sub = ArgumentParser(prog="agentenv").add_subparsers(dest="command")
    >>> args = add_parser(sub).parse_args(["MediaSearch-v0", "--protocol", "verl-tool"])
    >>> args.host, args.port, args.split, limits_from_args(args).max_live_envs
    ('127.0.0.1', 8710, 'train', 1024)
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from agentenv.cli.limit_flags import (
    MAX_PROCESSES,
    add_limit_flags,
    check_process_count,
    host_address,
    http_url,
    limits_from_flags,
    port_number,
)
from agentenv.errors import UserInputError
from agentenv.evaluation.run_args import (
    add_split_argument,
    check_env_args,
    check_split,
    env_spec,
    parse_env_args,
)
from agentenv.integrations.serve_env.limits import EnvServerLimits
from agentenv.terminal_text import terminal_text

COMMAND = "serve-env"
HELP = "serve an env id to a trainer's client: verl-tool's tool-server protocol or OpenEnv's"
PROTOCOLS = ("verl-tool", "openenv")

_LIMIT_FLAGS = {
    "max-live-envs": "max_live_envs",
    "trajectory-idle": "trajectory_idle_s",
    "max-turns": "max_turns",
    "max-actions-per-request": "max_actions_per_request",
    "max-action-chars": "max_action_chars",
    "max-body-bytes": "max_body_bytes",
    "max-connections": "max_connections",
    "max-connections-per-client": "max_connections_per_client",
    "header-timeout": "header_timeout_s",
    "idle-timeout": "idle_timeout_s",
    "body-timeout": "body_timeout_s",
}


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``serve-env`` to an ``argparse`` sub-parser collection."""
    parser = sub.add_parser(
        COMMAND,
        help=HELP,
        description="Serve one env id over HTTP on loopback. verl-tool: POST /get_observation, one env per "
        "trajectory id (docs/training-with-verl-tool.md). openenv: OpenEnv's /ws, /reset, /step, "
        "/state, /schema, one env per WebSocket session (docs/training-with-openenv.md).",
    )
    parser.add_argument("env_id", help="a registered env id, e.g. MediaSearch-v0")
    parser.add_argument(
        "--protocol", required=True, choices=PROTOCOLS, help="the trainer's protocol"
    )
    add_split_argument(
        parser,
        "train",
        "split of the episodes",
        "verl-tool rows may name another in extra_info['split']",
    )
    parser.add_argument(
        "--env-arg",
        action="append",
        default=[],
        metavar="K=V",
        help="keyword argument for gym.make (repeatable), e.g. --env-arg max_turns=12",
    )
    parser.add_argument(
        "--reward", help="reward preset name or config file (default: the env's, strict)"
    )
    parser.add_argument(
        "--host",
        type=host_address,
        default="127.0.0.1",
        help="interface to bind (default: 127.0.0.1, loopback only: the server has no auth)",
    )
    parser.add_argument(
        "--port", type=port_number, default=8710, help="TCP port (default: %(default)s)"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="verl-tool only: step the envs in this many worker processes, each trajectory pinned to "
        "one; the max-live-envs cap is split between them (1 to "
        f"{MAX_PROCESSES}; default: %(default)s, all in one process)",
    )
    parser.add_argument(
        "--fronts",
        type=int,
        default=1,
        help="verl-tool with --workers only, Linux: this many HTTP front processes share the port "
        "(SO_REUSEPORT; the kernel spreads connections over them), each linked to every worker, so "
        "one-trajectory requests use more cores; connection caps are per front "
        f"(1 to {MAX_PROCESSES}; default: %(default)s)",
    )
    parser.add_argument(
        "--log-level",
        default="warning",
        choices=["critical", "error", "warning", "info", "debug"],
        help="server log level; bad requests are logged at warning, one line each "
        "(default: %(default)s)",
    )
    add_limit_flags(parser, _LIMIT_FLAGS, EnvServerLimits())
    return parser


def limits_from_args(args: argparse.Namespace) -> EnvServerLimits:
    """The limits the flags give; a bad one is a one-line error naming its flag."""
    return limits_from_flags(args, _LIMIT_FLAGS, EnvServerLimits(), positive=True)


def run(args: argparse.Namespace) -> int:
    """Check every input, build the app, and serve until interrupted."""
    env_spec(args.env_id)
    check_split(args.env_id, args.split)
    env_kwargs = parse_env_args(args.env_arg)
    check_env_args(args.env_id, env_kwargs)
    if args.reward:
        env_kwargs["reward"] = args.reward
    limits = limits_from_args(args)
    _check_processes(args)
    from agentenv.integrations.serve_env.runner import require_env_server_extra, serve
    from agentenv.integrations.serve_env.sessions import env_factory

    if args.protocol == "openenv":  # before building anything: every missing extra in one line
        from importlib.util import find_spec

        if find_spec("openenv") is None:
            server_missing = find_spec("uvicorn") is None or find_spec("starlette") is None
            extras = "server,openenv" if server_missing else "openenv"
            raise ImportError(
                f"the OpenEnv server needs the {' and '.join(repr(e) for e in extras.split(','))} "
                f"extra{'s' if server_missing else ''}: pip install 'agentenv[{extras}]'"
            )
    require_env_server_extra()
    if args.fronts > 1:
        _check_open_files(args.fronts, args.workers)
    make = env_factory(args.env_id, env_kwargs)
    try:
        # A bad kwarg or split fails here, in one line, not at the first request; the env built
        # (corpus and index loaded) serves the first trajectory.
        built = [make(args.split)]
    except (ValueError, TypeError, KeyError) as err:
        given = ", ".join(f"{k}={v!r}" for k, v in env_kwargs.items()) or "no keyword arguments"
        raise UserInputError(
            f"{args.env_id} with split={args.split!r} and {given}: "
            f"{' '.join(str(err).split())[:300]}"
        ) from None

    from agentenv.engine.task_index import warm_task_positions

    # The served split's task-id index, built (first time on this machine) or read back in the
    # background: a start naming a task_id would otherwise build it on the event loop (35 s for
    # the rare-disease training split), and workers read what this writes.
    warm_task_positions(getattr(built[0].unwrapped, "tasks", ()))

    def make_first_built(split: str) -> Any:
        return built.pop() if built and split == args.split else make(split)

    if args.fronts > 1:
        built.clear()  # the check above warmed the caches; each worker builds its own envs
        return _run_fronts(args, env_kwargs, limits)
    if args.workers > 1:
        from agentenv.integrations.serve_env.shards import ShardedVerlToolApp

        built.clear()  # the check above warmed the caches; each worker builds its own envs
        app: Any = ShardedVerlToolApp(
            args.env_id,
            workers=args.workers,
            split=args.split,
            env_kwargs=env_kwargs,
            limits=limits,
            log_level=args.log_level,
        )
        websockets = False
    elif args.protocol == "verl-tool":
        from agentenv.integrations.verl_tool import create_app

        app = create_app(
            args.env_id,
            split=args.split,
            env_kwargs=env_kwargs,
            limits=limits,
            make=make_first_built,
        )
        websockets = False
    else:
        from agentenv.integrations.openenv import create_app as create_openenv_app

        app = create_openenv_app(
            args.env_id,
            split=args.split,
            env_kwargs=env_kwargs,
            limits=limits,
            make=make_first_built,
        )
        websockets = True
    workers = f", {args.workers} worker processes" if args.workers > 1 else ""

    def announce(port: int) -> None:
        print(serving_line(args, port, workers), file=sys.stderr, flush=True)

    serve(
        app,
        args.host,
        args.port,
        limits,
        websockets=websockets,
        log_level=args.log_level,
        announce=announce,
    )
    return 0


def _check_processes(args: argparse.Namespace) -> None:
    """Refuse ``--workers`` and ``--fronts`` outside 1 to ``MAX_PROCESSES`` or the protocol they need,
    in one line, before anything is built (``10**18`` workers ran out of memory)."""
    check_process_count("--workers", args.workers)
    if args.workers > 1 and args.protocol != "verl-tool":
        raise UserInputError(
            "--workers applies to --protocol verl-tool only (an OpenEnv session is one WebSocket)"
        )
    check_process_count("--fronts", args.fronts)
    if args.fronts > 1 and args.workers < 2:
        raise UserInputError(
            "--fronts applies with --workers 2 or more (--protocol verl-tool): the fronts share "
            "the workers' trajectories"
        )


_SUPERVISOR_SPARE_FILES = 64
"""Open files the ``--fronts`` supervisor keeps beside its sockets: pipes to its children, logs."""


def _check_open_files(fronts: int, workers: int) -> None:
    """Refuse ``--fronts F --workers N`` when the supervisor cannot hold its sockets, in one line.

    Why: the supervisor holds F listening sockets and a socket pair per front and worker
    (:mod:`agentenv.integrations.serve_env.fronts`) at once; past the open-file limit it failed
    with "OSError: Too many open files" halfway through starting them. The soft limit is raised
    towards what is needed first, as the server does for its connections.
    """
    from agentenv.retrieval.server import raise_fd_limit

    needed = fronts * (2 * workers + 1) + _SUPERVISOR_SPARE_FILES
    allowed = raise_fd_limit(needed)
    if allowed < needed:
        raise UserInputError(
            f"--fronts {fronts} with --workers {workers} needs {needed:,} open files (a socket "
            f"pair per front and worker); this process may open {allowed:,} (ulimit -n): "
            "lower --fronts or --workers"
        )


def serving_line(args: argparse.Namespace, port: int, detail: str = "") -> str:
    """The line serve-env prints once it listens, ``--host`` (and every other user value) shown
    through :func:`~agentenv.terminal_text.terminal_text`.

    Example:
        >>> args = argparse.Namespace(env_id="MediaSearch-v0", split="train", protocol="verl-tool")
        >>> print(serving_line(argparse.Namespace(**vars(args), host="h\\x1b[2K"), 8710))
        serve-env: MediaSearch-v0 (train) over the verl-tool protocol on http://h\\x1b[2K:8710
    """
    return terminal_text(
        f"serve-env: {args.env_id} ({args.split}) over the {args.protocol} protocol on "
        f"{http_url(args.host, port)}{detail}"
    )


def _run_fronts(
    args: argparse.Namespace, env_kwargs: dict[str, Any], limits: EnvServerLimits
) -> int:
    """``--fronts F``: bind the shared port, start the workers and fronts, and wait (:mod:`.fronts`)."""
    from agentenv.integrations.serve_env.fronts import NoReusePort, serve_fronts, shared_listeners
    from agentenv.integrations.serve_env.runner import checked_limits, configure_logging

    configure_logging(args.log_level)
    limits = checked_limits(args.host, limits)
    try:
        listeners = shared_listeners(args.host, args.port, args.fronts)
    except NoReusePort as err:
        raise UserInputError(str(err)) from None
    port = listeners[0].getsockname()[1]
    print(
        serving_line(
            args, port, f", {args.fronts} front processes, {args.workers} worker processes"
        ),
        file=sys.stderr,
        flush=True,
    )
    return serve_fronts(
        listeners,
        env_id=args.env_id,
        workers=args.workers,
        split=args.split,
        env_kwargs=env_kwargs,
        limits=limits,
        log_level=args.log_level,
    )
