"""Argument helpers shared by every ``agentenv`` sub-command: ``--env-arg``, ``--agent-args``, input paths.

Why a module of its own: ``agentenv eval``, ``export-sft`` and ``check-tasks``
read the same flags, and each sub-command module is imported only when it
runs. Keeping the helpers here (not in :mod:`agentenv.cli.main`) means no
sub-command imports the command-line entry point, so there is no import cycle.

Every helper raises :class:`~agentenv.errors.UserInputError` with a message
that names the bad value, which the command prints as one line (exit 2).

Example:
    >>> parse_env_args(["k=3", "presentation=text", "max_turns=12", "flag=true"])
    {'k': 3, 'presentation': 'text', 'max_turns': 12, 'flag': True}
    >>> key_values(["model=qwen", "temperature=0.7"])
    (('model', 'qwen'), ('temperature', '0.7'))
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from agentenv.did_you_mean import did_you_mean
from agentenv.engine.strict_json import RepeatedKey, loads_unique
from agentenv.engine.task_files import MAX_TASK_FILE_BYTES, MAX_TASK_LINE_BYTES, check_task_source  # noqa: F401 - re-exported
from agentenv.errors import UserInputError
from agentenv.terminal_text import terminal_text

OWN_FLAGS = {"split": "--split", "tasks": "--tasks", "reward": "--reward"}
"""gym.make keywords that have a flag of their own (``--env-arg split=…`` is refused, naming the flag)."""


class ArgumentParser(argparse.ArgumentParser):
    """An ``argparse`` parser whose usage errors are one line that names the command, the problem and
    where to read more (argparse's own prints the whole wrapped usage first: 10+ lines for ``eval``)."""

    def error(self, message: str) -> NoReturn:
        """Print ``agentenv eval: error: MESSAGE (see agentenv eval --help)`` and exit 2 (the message
        through :func:`~agentenv.terminal_text.terminal_text`: it quotes what was typed)."""
        self.exit(
            2, terminal_text(f"{self.prog}: error: {message} (see {self.prog} --help)") + "\n"
        )

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def] # noqa: ANN001, ANN201 - argparse's signature
        """Refuse an unknown ``--flag`` first, naming the closest known one (argparse would report a
        missing required flag instead, when the unknown one is that flag misspelt)."""
        if args is not None and self._subparsers is None:  # a command's own parser
            self._check_flags(list(args))
        return super().parse_known_args(args, namespace)

    def _check_flags(self, args: list[str]) -> None:
        from agentenv.did_you_mean import did_you_mean

        known = [o for o in self._option_string_actions if o.startswith("--")]
        for arg in args:
            if arg == "--":
                return
            name = arg.partition("=")[0]
            if arg.startswith("--") and not any(o.startswith(name) for o in known):
                self.error(f"unknown option {name}{did_you_mean(name, known)}")

    def _check_value(self, action: argparse.Action, value: object) -> None:
        """argparse's check, with the closest choice named (a sub-command's list is its own message)."""
        if action.choices is None or value in action.choices:
            return
        from agentenv.did_you_mean import did_you_mean

        choices = [str(c) for c in action.choices]
        hint = did_you_mean(str(value), choices)
        if isinstance(action, argparse._SubParsersAction):
            raise argparse.ArgumentError(
                None, f"unknown command {value!r}{hint}; commands: {', '.join(choices)}"
            )
        raise argparse.ArgumentError(
            action, f"invalid choice: {value!r}{hint}; choose from {', '.join(choices)}"
        )


def add_split_argument(
    parser: argparse.ArgumentParser, default: str, what: str, note: str = ""
) -> None:
    """``--split``: any split the env id's family declares (``Family.splits``), checked by
    :func:`check_split` once the id is known, so a family's own split needs no line here."""
    parser.add_argument(
        "--split",
        default=default,
        metavar="SPLIT",
        help=f"{what}: train, validation, test, or one the env's family declares (agentenv list "
        "shows them: MediaSearch's casual, rare disease's real) "
        f"(default: %(default)s{'; ' + note if note else ''})",
    )


def check_split(env_id: str, split: str) -> str:
    """``split`` if ``env_id``'s family declares it, else a one-line error listing the family's splits."""
    from agentenv.families import check_split as family_check

    return family_check(env_id, split)


def parse_env_args(pairs: Sequence[str]) -> dict[str, object]:
    """``--env-arg KEY=VALUE`` pairs as gym.make kwargs: a VALUE that parses as JSON is that value, else a string."""
    out: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UserInputError(f"--env-arg expects KEY=VALUE, got {pair!r}")
        try:
            out[key] = loads_unique(value)
        except RecursionError:
            raise UserInputError(f"--env-arg {key}: the JSON value is nested too deeply") from None
        except RepeatedKey as err:
            raise UserInputError(f"--env-arg {key}: {err}") from None
        except ValueError:
            out[key] = value
    return out


def key_values(pairs: Sequence[str], flag: str = "--agent-args") -> tuple[tuple[str, str], ...]:
    """``K=V`` pairs as ``(key, value)`` strings, in order; a pair without ``=`` is a one-line error."""
    out = []
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UserInputError(f"{flag} expects K=V pairs, got {pair!r}")
        out.append((key, value))
    return tuple(out)


def env_spec(env_id: str):  # noqa: ANN201 - a gymnasium EnvSpec; gymnasium is imported lazily
    """The registered spec of ``env_id``, also in the ``module:Id`` form (the module is imported first,
    as ``gym.make`` does); an unknown id is a one-line error."""
    import importlib

    import gymnasium as gym

    import agentenv  # noqa: F401 - registers the ids

    module, sep, bare = env_id.rpartition(":")
    if sep:
        try:
            importlib.import_module(module)
        except ImportError as err:
            raise UserInputError(
                f"{env_id}: cannot import module {module!r} ({err}); is it on PYTHONPATH?"
            ) from None
    from agentenv.families import family_of_env

    bare = bare if sep else env_id
    family_of_env(
        bare
    )  # an unknown id is a one-line error with a close match and the registered ids
    try:
        return gym.spec(bare)
    except gym.error.Error as err:
        from agentenv.multiagent.registry import env_ids

        if bare in env_ids():  # listed by `agentenv list`, but not a gymnasium id
            raise UserInputError(
                f"{env_id} is a two-agent (PettingZoo) env, which this command does not run; "
                f"agentenv eval {bare} plays its lead against the simulated side, and "
                f"agentenv.multiagent.as_single_agent(make({bare!r})) gives a gymnasium env"
            ) from None
        raise UserInputError(
            f"{env_id}: not a registered env id ({err}); `agentenv list` shows them"
        ) from None


def env_kwarg_names(env_id: str) -> set[str] | None:
    """The keyword arguments ``gym.make(env_id, ...)`` accepts: the env class's ``__init__`` (and its
    bases' while they pass ``**kwargs`` on) plus the registered ones; ``None`` when it takes any."""
    import inspect

    import gymnasium as gym

    spec = env_spec(env_id)
    creator = (
        gym.envs.registration.load_env_creator(spec.entry_point)
        if isinstance(spec.entry_point, str)
        else spec.entry_point
    )
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


def check_env_args(env_id: str, env_args: dict[str, object]) -> None:
    """Refuse ``--env-arg`` keys that have their own flag or that the env does not take, in one line."""
    for key in env_args:
        if key in OWN_FLAGS:
            raise UserInputError(f"--env-arg {key}: use {OWN_FLAGS[key]} instead")
    accepted = env_kwarg_names(env_id) if env_args else None
    if accepted is None:
        return
    unknown = sorted(set(env_args) - accepted)
    if unknown:
        shown = ", ".join(sorted(accepted - set(OWN_FLAGS)))
        hint = did_you_mean(unknown[0], accepted - set(OWN_FLAGS))
        raise UserInputError(
            f"--env-arg {unknown[0]}: {env_id} takes no keyword {unknown[0]!r}{hint}; it accepts: {shown}"
        )


MAX_EPISODES = 10_000_000
"""The most episodes one command plans: the plan is a list, and 10^14 filled 24 GB before the
kernel killed the process; ten million is days of episodes at thousands a second."""


def whole_number_in(text: str, least: int, most: int | None = None) -> int | None:
    """``text`` as a whole number from ``least`` to ``most`` (no bound when None), else None:
    the one reading of every count, seed and port flag, each wording its own refusal.

    Example:
        >>> whole_number_in("7", 0), whole_number_in("-1", 0), whole_number_in("x", 0), whole_number_in("9", 1, 8)
        (7, None, None, None)
    """
    try:
        value = int(text)
    except ValueError:
        return None
    return value if least <= value and (most is None or value <= most) else None


def count_of(what: str, most: int) -> Callable[[str], int]:
    """An argparse type for a count of ``what`` from 1 to ``most``, refused before any work.

    Example:
        >>> count_of("episodes", MAX_EPISODES)("200")
        200
        >>> count_of("episodes", MAX_EPISODES)("99999999999999")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: expected 1 to 10,000,000 episodes, got '99999999999999'
    """

    def count(text: str) -> int:
        value = whole_number_in(text, 1, most)
        if value is None:
            raise argparse.ArgumentTypeError(f"expected 1 to {most:,} {what}, got {text!r}")
        return value

    count.__name__ = what  # argparse names the type in its own messages
    return count


def seed_number(text: str) -> int:
    """``--seed``'s argparse type: a whole number from 0, as numpy and gymnasium take seeds
    (``-1`` failed after the env was built, in numpy's words, without naming the flag).

    Example:
        >>> seed_number("7")
        7
        >>> seed_number("-1")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: a seed is a whole number from 0, got '-1'
    """
    seed = whole_number_in(text, 0)
    if seed is None:
        raise argparse.ArgumentTypeError(f"a seed is a whole number from 0, got {text!r}")
    return seed


def out_path(text: str) -> Path:
    """``--out``'s argparse type: a path, where an empty one is an error (``Path("")`` is the
    working folder: ``eval --out ""`` wrote its run files among the user's).

    Example:
        >>> out_path("results/bm25")
        PosixPath('results/bm25')
    """
    return _named_path(text, "an empty path names no folder or file; give one")


def tasks_path(text: str) -> Path:
    """``--tasks``'s argparse type: a path, where an empty one is an error (``Path("")`` is the
    working folder, whose every file a folder reader would have taken as tasks).

    Example:
        >>> tasks_path("cases.jsonl")
        PosixPath('cases.jsonl')
    """
    return _named_path(text, "an empty path names no file; give a task file or folder")


def _named_path(text: str, refusal: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError(refusal)
    return Path(text)


def check_tasks_path(path: Path, flag: str = "--tasks", env_id: str | None = None) -> None:
    """Refuse a task source that cannot be a task file before anything reads it, in one line
    (the bounds of :mod:`agentenv.engine.task_files`, which the families' readers apply from Python too).

    A folder's files are checked for what they are, not read: the family's reader names a file a
    folder of its tasks may not hold, or says that it takes no folder, before it reads the rest.
    With ``env_id``, an env that reads no task file of the user's is refused first
    (:func:`check_takes_tasks`).
    """
    if env_id is not None:
        check_takes_tasks(env_id, flag)
    check_task_source(path, flag, contents=not path.is_dir())


def check_takes_tasks(env_id: str, flag: str = "--tasks") -> None:
    """Refuse ``flag`` for an env whose constructor takes no ``tasks`` keyword, in one line.

    Why: such an env builds its own tasks and hands them to :class:`~agentenv.core.ToolEnv`
    positionally, so ``gym.make(env_id, tasks=...)`` failed inside it with Python's ``got multiple
    values for argument 'tasks'`` (the example family ``capitals`` did), naming neither the flag
    nor a fix. An env that takes any keyword (``**kwargs`` to the end) is let through.
    """
    accepted = env_kwarg_names(env_id)
    if accepted is None or "tasks" in accepted:
        return
    from agentenv.families import family_of_env

    family = family_of_env(env_id.rpartition(":")[2])
    raise UserInputError(
        f"{flag}: {env_id} reads no task file of yours (its env takes no 'tasks' keyword); "
        f"use --split {'/'.join(family.splits)} instead, or give the family's env a keyword-only "
        "'tasks' parameter that reads the file" + (f" (see {family.docs})" if family.docs else "")
    )


def print_error(message: str) -> None:
    """One ``agentenv: error:`` message on stderr, its control characters shown as escapes
    (:func:`~agentenv.terminal_text.terminal_text`: a message quotes paths and values of the
    user's); line breaks are kept, as ``agentenv``'s own error lines keep them (a list of bad rows)."""
    print(terminal_text(f"agentenv: error: {message}", keep="\n"), file=sys.stderr)
