"""``agentenv judge-consistency``: how stable is an LLM judge on the answers of an ``agentenv eval`` run?

It reads ``episodes.jsonl``, asks the judge every answer in each paraphrased
prompt, prints the consistency report, and exits 0 when the judge is stable
(Fleiss' kappa >= ``--min-kappa`` and flip rate <= ``--max-flip-rate``), 1
when it is not, and 2 when the endpoint, the input or the command itself
fails: a script reads 1 as a verdict, so no failure may ever exit 1. The lead
wires it into ``agentenv.cli.main`` with :func:`add_parser` and :func:`run`.

Every file is checked before the first request, and read as run files are
(:mod:`agentenv.evaluation.run_files`: regular files only, bounded, each bad
line named). No output (``--json``, ``--cache``) may be an input (the episodes
file or the ``summary.json`` beside it), even with ``--overwrite``: the report
once replaced the run's own summary.

The env id (``--env``) picks the task family whose ``gold_text`` shows the
gold to the judge; without it, the env id recorded in the ``summary.json``
next to the episodes file is used, and the two must agree when both exist.

Example:
    >>> import argparse
    >>> sub = argparse.ArgumentParser(prog="agentenv").add_subparsers(dest="command")
    >>> parser = add_parser(sub)
    >>> args = parser.parse_args(["--env", "MediaSearch-v0", "--episodes", "e.jsonl", "--endpoint", "http://127.0.0.1:8000"])
    >>> args.model, args.min_kappa, args.retries
    ('judge', 0.8, 2)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentenv.cli.limit_flags import number_in, positive_int
from agentenv.cli.report_file import add_overwrite_flag, check_report_file
from agentenv.errors import UserInputError
from agentenv.evaluation.run_args import whole_number_in

if TYPE_CHECKING:
    from agentenv.judge.consistency import ConsistencyReport


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``judge-consistency`` sub-command to an ``add_subparsers()`` object."""
    from agentenv.cli.help_format import HelpFormatter, plain
    from agentenv.judge.client import MAX_BACKOFF_S, MAX_RETRIES

    p = subparsers.add_parser(
        "judge-consistency",
        help="measure an LLM judge's agreement across paraphrased prompts and with the rule-based grader",
        description=plain(__doc__.split("\n\n")[0].replace("\n", " "))
        + " Exit status: 0 stable, 1 unstable, "
        "2 the endpoint, the input or the command failed.",
        formatter_class=HelpFormatter,
    )
    p.add_argument(
        "--env",
        help="the env id the episodes come from (a registered id); "
        "default: env_id in the summary.json next to --episodes",
    )
    p.add_argument(
        "--episodes", required=True, type=Path, help="episodes.jsonl written by `agentenv eval`"
    )
    p.add_argument(
        "--endpoint",
        required=True,
        help="base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:8000",
    )
    p.add_argument(
        "--model", default="judge", help="model name sent to the endpoint, as the server serves it"
    )
    p.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="environment variable holding a bearer token, if the endpoint needs one",
    )
    p.add_argument(
        "--cache",
        type=Path,
        help="JSONL verdict cache this command writes: a rerun makes no request for cached "
        "verdicts; a new path or one it wrote, never an input (default: no cache)",
    )
    p.add_argument(
        "--limit", type=positive_int, help="judge only the first N records (default: all)"
    )
    p.add_argument("--workers", type=positive_int, default=4, help="concurrent requests")
    p.add_argument(
        "--timeout", type=number_in(0.001, 3600.0), default=30.0, help="seconds per request"
    )
    p.add_argument(
        "--retries",
        type=retry_count,
        default=2,
        help=f"extra attempts on timeouts, 429 and 5xx, 0 to {MAX_RETRIES}; the wait before "
        f"each doubles from 0.5 s, at most {MAX_BACKOFF_S:g} s",
    )
    p.add_argument(
        "--min-kappa",
        type=number_in(-1.0, 1.0),
        default=0.8,
        help="Fleiss' kappa a stable judge reaches",
    )
    p.add_argument(
        "--max-flip-rate",
        type=number_in(0.0, 1.0),
        default=0.05,
        help="flip rate a stable judge stays under",
    )
    p.add_argument("--json", type=Path, help="also write the report as JSON")
    add_overwrite_flag(p, "--json")
    return p


def retry_count(text: str) -> int:
    """``--retries``: a whole number from 0 to :data:`~agentenv.judge.client.MAX_RETRIES`.

    Why a cap: ``--retries 10**18`` was accepted, and a judge that fails ten times in a row is
    down, not busy; retrying it only delays the one-line error.

    >>> retry_count("3")
    3
    >>> retry_count("11")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a whole number from 0 to 10, got '11'
    """
    from agentenv.judge.client import MAX_RETRIES

    value = whole_number_in(text, 0, MAX_RETRIES)
    if value is None:
        raise argparse.ArgumentTypeError(
            f"expected a whole number from 0 to {MAX_RETRIES}, got {text!r}"
        )
    return value


def run(args: argparse.Namespace) -> int:
    """Run the sub-command; returns the exit code: 0 stable, 1 unstable, 2 any failure.

    Why every failure is caught here: ``agentenv.cli.main`` gives an unexpected error exit 1,
    which this command documents as UNSTABLE, a verdict the judge never reached.
    """
    from agentenv.judge.client import JudgeEndpointError
    from agentenv.judge.prompts import JudgeReplyError

    try:
        return _run(args)
    except (JudgeEndpointError, JudgeReplyError, ValueError) as exc:  # UserInputError included
        return _fail(str(exc))
    except BrokenPipeError:  # `| head` closed stdout: agentenv.cli.main ends quietly
        raise
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        return _fail(f"{where}{exc.strerror or exc}; give a path this user can read and write")
    except Exception as exc:  # noqa: BLE001 - a bug still ends in one line and exit 2, never 1
        _print_traceback_if_debug()
        return _fail(
            f"{type(exc).__name__}: {exc} (a bug in agentenv; AGENTENV_DEBUG=1 shows the traceback)"
        )


def _run(args: argparse.Namespace) -> int:
    """Check every path, then judge; a user's mistake raises :class:`UserInputError`."""
    from agentenv.judge.consistency import judge_consistency, read_episodes
    from agentenv.judge.gold import family_gold_text
    from agentenv.judge.reward import JudgeReward

    _check_env_flag(args.env)
    inputs = _check_inputs(args.episodes)
    _check_outputs(args, inputs)
    env_id = _env_id(args.env, args.episodes)
    try:
        gold_text = family_gold_text(env_id)
    except (UserInputError, ImportError) as exc:
        raise UserInputError(f"env {env_id!r}: {exc}") from None
    api_key = _api_key(args.api_key_env)
    try:
        judge = JudgeReward(
            args.endpoint,
            args.model,
            cache_path=args.cache,
            timeout_s=args.timeout,
            retries=args.retries,
            api_key=api_key,
        )
    except UserInputError as exc:  # the cache file's refusal: say which flag named it
        raise UserInputError(f"--cache {exc}") from None
    records = read_episodes(args.episodes)[: args.limit]
    report = judge_consistency(records, judge, gold_text=gold_text, workers=max(1, args.workers))
    stable = report.stable(args.min_kappa, args.max_flip_rate)
    _print_report(args, env_id, report, stable, judge.client.requests)
    if args.json is not None:
        from agentenv.evaluation.run_dir import write_atomic

        payload = {"env": env_id, "model": args.model, "stable": stable, **report.to_dict()}
        write_atomic(args.json, json.dumps(payload, indent=2) + "\n")
    return 0 if stable else 1


def _check_env_flag(env: str | None) -> None:
    """``--env`` must be a registered id (or a ``module:Class`` path), checked before any file."""
    from agentenv.registration import env_ids

    if env is not None and ":" not in env and env not in env_ids():
        raise UserInputError(f"--env {env!r} is not a registered id; known: {', '.join(env_ids())}")


def _check_inputs(episodes: Path) -> tuple[Path, Path]:
    """The inputs, ``(episodes, summary.json beside it)``, once ``episodes`` is known to be a regular
    file: a FIFO or a device is refused here, before anything else is read or written."""
    from agentenv.evaluation.run_files import RunFileError, require_regular
    from agentenv.judge.gold import summary_path

    try:
        require_regular(episodes)
    except (FileNotFoundError, NotADirectoryError):
        raise UserInputError(
            f"--episodes {episodes}: no such file (write one with `agentenv eval ... --out DIR`)"
        ) from None
    except RunFileError as exc:
        raise UserInputError(f"--episodes {exc}") from None
    return episodes, summary_path(episodes)


def _check_outputs(args: argparse.Namespace, inputs: tuple[Path, Path]) -> None:
    """Refuse, before any request, an output that is an input, then check each output's path.

    Why even with ``--overwrite``: ``--json ev1/summary.json --overwrite`` replaced the summary the
    command had just read, and ``--cache ev1/episodes.jsonl`` would append verdicts to the run.
    """
    named = "the episodes file or the summary.json beside it"
    for flag, path in (("--json", args.json), ("--cache", args.cache)):
        if path is not None and any(_same_file(path, i) for i in inputs):
            raise UserInputError(
                f"{flag} {path}: is one of the inputs ({named}); give {flag} a new path"
            )
    if args.json is not None and args.cache is not None and _same_file(args.json, args.cache):
        raise UserInputError(
            f"--json {args.json}: is the --cache file; give the report another path"
        )
    _check_json_kind(args.json)
    check_report_file(args.json, "--json", overwrite=args.overwrite, inputs=inputs)
    _check_cache_path(args.cache)


def _check_json_kind(path: Path | None) -> None:
    """An existing ``--json`` must be a regular file (or a folder, which
    :func:`~agentenv.cli.report_file.check_report_file` refuses in its own words).

    Why: the report is written by a rename, so ``--json /dev/null --overwrite`` run as root would
    replace the device itself, and a FIFO would be swapped for a file under its reader.
    """
    if path is None:
        return
    try:
        mode = os.stat(path).st_mode
    except OSError:  # nothing there yet (check_report_file judges its folder)
        return
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise UserInputError(
            f"--json {path}: a FIFO, socket or device, not a regular file; give the report a file path"
        )


def _same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` are one file: the same inode (a symlink or hard link counts), or,
    where one does not exist yet, the same resolved path."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return os.path.realpath(a) == os.path.realpath(b)


def _check_cache_path(cache: Path | None) -> None:
    """``--cache`` is a regular file this user can append to, or a new path in a folder that can
    hold it; a FIFO (hung the reader), a device (``/dev/zero`` grew it to 12 GB) or a path through
    a file (``A.jsonl/x``) is refused before it is opened."""
    from agentenv.evaluation.run_files import RunFileError, require_regular
    from agentenv.judge.reward import CACHE_FIX

    if cache is None:
        return
    try:
        require_regular(cache)
    except FileNotFoundError:
        _check_new_file_folder(cache)
        return
    except NotADirectoryError:
        raise UserInputError(
            f"--cache {cache}: a part of this path is a file, not a folder; {CACHE_FIX}"
        ) from None
    except RunFileError as exc:
        raise UserInputError(f"--cache {exc}; {CACHE_FIX}") from None
    if not os.access(cache, os.W_OK):
        raise UserInputError(f"--cache {cache}: this user cannot write it; {CACHE_FIX}")


def _check_new_file_folder(cache: Path) -> None:
    """The nearest folder above a new ``--cache`` that exists must be writable: the cache's
    folders are made there, and a refusal after the paid requests would lose every verdict."""
    from agentenv.judge.reward import CACHE_FIX

    folder = Path(os.path.abspath(cache)).parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise UserInputError(f"--cache {cache}: {folder} is not a folder; {CACHE_FIX}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UserInputError(f"--cache {cache}: this user cannot write in {folder}; {CACHE_FIX}")


def _env_id(env: str | None, episodes: Path) -> str:
    """``--env``, or the env id in the run's ``summary.json``; both given must agree."""
    from agentenv.judge.gold import run_env_id

    recorded = run_env_id(episodes)
    if env is None and recorded is None:
        raise UserInputError(f"--env is needed: no summary.json with an env_id next to {episodes}")
    if env is not None and recorded is not None and recorded != env:
        raise UserInputError(
            f"--env {env!r} disagrees with the run's summary.json (env_id {recorded!r})"
        )
    return env or str(recorded)


def _api_key(variable: str | None) -> str | None:
    """The bearer token in ``--api-key-env``'s variable; a named variable that is empty is refused."""
    if not variable:
        return None
    key = os.environ.get(variable)
    if not key:
        raise UserInputError(
            f"--api-key-env {variable}: that environment variable is empty or unset"
        )
    return key


def _print_report(
    args: argparse.Namespace,
    env_id: str,
    report: ConsistencyReport,
    stable: bool,
    requests: int,
) -> None:
    """The report, a note when every verdict was the same, and the verdict line."""
    from agentenv.terminal_text import terminal_text

    print(terminal_text(f"judge {args.model!r} at {args.endpoint} on {env_id} ({args.episodes})"))
    print(report.format())
    if math.isnan(report.fleiss_kappa):
        print(
            "\nnote: every verdict was the same, so the judge is stable across prompts without "
            "telling one answer from another; read its agreement with the rules above before "
            "using it as a reward"
        )
    print(
        f"\n{'STABLE' if stable else 'UNSTABLE'} across prompts: kappa >= {args.min_kappa} and flip rate <= "
        f"{args.max_flip_rate} {'hold' if stable else 'do not hold'} (agreement with the rules is reported above, "
        f"not judged); HTTP requests made: {requests}"
    )


def _print_traceback_if_debug() -> None:
    """With ``AGENTENV_DEBUG=1``, the traceback of the error being handled, as ``agentenv.cli.main``
    prints one."""
    if os.environ.get("AGENTENV_DEBUG", "") not in ("", "0"):
        import traceback

        traceback.print_exc()


def _fail(message: str) -> int:
    """One error line on stderr, terminal-safe (it quotes paths and the judge endpoint's replies);
    exit status 2."""
    from agentenv.terminal_text import terminal_text

    print(terminal_text(f"agentenv judge-consistency: error: {message}"), file=sys.stderr)
    return 2
