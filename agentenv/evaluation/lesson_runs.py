"""The output folder of ``agentenv reproduce``: refuse to overwrite a run, label a smoke run, print a short table.

Why: ``agentenv eval`` writes through :class:`~agentenv.evaluation.run_dir.RunDirectory`,
which refuses a folder that already holds a run; ``reproduce`` wrote its
lesson straight into ``--out``, so a second run silently replaced (or, worse,
mixed with) the first one's runs, plots and summary. And ``--quick``, a
minute-long budget meant to show that a lesson runs, printed about 100 lines
of JSON that read like results.

:func:`lesson_output` applies the run directory's rule to a lesson's folder:

* a folder that holds a run (its ``reproduce.json``, written when a lesson
  starts, or a ``summary.json``) is refused in one line, unless ``--overwrite``;
* a folder that holds anything else is always refused: ``--overwrite`` replaces
  a run, never a folder of other files (``--out .`` in a project must not
  delete the project);
* with ``--overwrite`` the old run is moved aside while the lesson runs,
  deleted once the new one is complete, and put back if the run fails or is
  interrupted (Ctrl-C, SIGTERM), so ``--out`` holds the whole old run or the
  whole new one, never a mix;
* a lesson cannot be resumed (its training keeps no per-episode state to
  continue from), so there is no ``--resume``: the refusal says so;
* an unfinished run (one that failed, was interrupted or was killed: its
  :data:`RUNNING` record is still there, or it wrote no ``summary.json``) does
  not block the same command: a plain rerun replaces it, saying so, as
  ``--overwrite`` would. A run whose process still runs on this machine is
  refused, even with ``--overwrite``. A lesson that stops before it writes
  anything removes what it created (the start marker, and the folder if it made it);
* a run that an ``--overwrite`` killed outright (SIGKILL) left set aside in
  ``.NAME.old-XXXX/`` is named at every later start on that ``--out``, with
  the commands that restore it or delete it; it is never deleted here.

:func:`finish` then labels ``summary.json`` (``"smoke_run": true`` and a
``smoke_note`` first, for ``--quick``) and prints a short table of the
headline figures, each with its interval where the summary has one.

Example:
    >>> print(summary_table({"strict": {"accuracy": 0.5, "accuracy_ci": [0.25, 0.75], "test_episodes": 8},
    ...                      "effects": {"a_minus_b": {"mean": -0.1, "ci": [-0.3, 0.1]}}, "meta": {"x": 1}}))
    strict             accuracy 0.500 [0.250, 0.750]; test_episodes 8
    effects/a_minus_b  mean -0.100 [-0.300, 0.100]
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shlex
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from agentenv.errors import UserInputError
from agentenv.evaluation.run_dir import (
    SUMMARY_FILE,
    refuse_file,
    sigterm_as_interrupt,
    write_atomic,
)
from agentenv.terminal_text import terminal_text

__all__ = [
    "MARKER",
    "RUNNING",
    "SMOKE_NOTE",
    "finish",
    "label_summary",
    "lesson_output",
    "summary_table",
    "unfinished",
]

SMOKE_NOTE = (
    "--quick is a smoke run: it checks that the lesson runs end to end on a tiny budget; "
    "its figures are not results (run without --quick for those)"
)
MARKER = "reproduce.json"
"""Written first into a lesson's folder: what makes a folder a run that ``--overwrite`` may replace."""
RUNNING = "reproduce.running.json"
"""Written after :data:`MARKER` (the lesson's process and host), removed when the lesson completes:
a folder that still holds it once that process is gone holds an unfinished run, which the same
command may replace. It is kept (marked ``stopped``) when the lesson fails or is interrupted."""
_NOT_FIGURES = ("meta", "baselines", "shift", "per_seed", "train")


def holds_anything(path: Path) -> bool:
    """Whether ``path`` is a folder with something in it (an empty or missing folder holds no run)."""
    return path.is_dir() and any(path.iterdir())


def holds_run(path: Path) -> bool:
    """Whether ``path`` holds a lesson run (or an ``eval`` run): its :data:`MARKER` or a ``summary.json``."""
    return (path / MARKER).is_file() or (path / SUMMARY_FILE).is_file()


def unfinished(path: Path) -> str | None:
    """Why the lesson run in ``path`` did not finish, or None (a complete run, or no lesson run).

    Example:
        >>> unfinished(Path("no-such-folder")) is None
        True
    """
    if not (path / MARKER).is_file():
        return None
    if (path / RUNNING).exists():
        stopped = (_owner(path) or {}).get("stopped")
        return f"it stopped on {stopped}" if stopped else "its process ended before it finished"
    if not (path / SUMMARY_FILE).is_file():
        return "it wrote no summary.json"
    return None


@contextlib.contextmanager
def lesson_output(
    out: Path, lesson: str, *, overwrite: bool = False, quick: bool = False
) -> Iterator[Path]:
    """The folder a lesson writes into, under the rules of the module docstring.

    Raises:
        UserInputError: ``out`` is a file, holds a complete run and ``overwrite`` is off, holds a
            run whose process still runs, or holds other files.
    """
    out = Path(out)
    refuse_file(out)
    if holds_run(out):
        _refuse_live_run(out, overwrite)
    _name_runs_set_aside(out)
    aside = _set_aside(out, overwrite) if holds_anything(out) else None
    made = _first_missing(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_atomic(
            out / MARKER,
            json.dumps({"command": "agentenv reproduce", "lesson": lesson, "quick": quick}) + "\n",
        )
        write_atomic(out / RUNNING, json.dumps(_this_process()) + "\n")
        with sigterm_as_interrupt():  # a scheduler's stop restores the old run as Ctrl-C does
            yield out
    except BaseException as err:
        if aside is not None:  # the new run failed or was stopped: the old one comes back whole
            shutil.rmtree(out, ignore_errors=True)
            (aside / out.name).replace(out)
            shutil.rmtree(aside, ignore_errors=True)
        elif not _remove_start(out, made):
            _keep_unfinished(out, err)
        raise
    (out / RUNNING).unlink(missing_ok=True)
    if aside is not None:
        shutil.rmtree(aside, ignore_errors=True)


def _set_aside(out: Path, overwrite: bool) -> Path:
    """Move the run in ``out`` into a new hidden folder beside it (returned), or refuse in one line.

    A complete run needs ``overwrite``; an unfinished one is replaced by a plain rerun, saying so.
    """
    if not holds_run(out):
        raise UserInputError(
            f"{out} holds files that are not an agentenv run; give a new or empty --out "
            "(--overwrite replaces only a run)"
        )
    why = unfinished(out)
    if why is None and not overwrite:
        raise UserInputError(
            f"{out} already holds a run; pass --overwrite to replace it or choose another "
            "--out (a lesson cannot be resumed: its training restarts from the first step)"
        )
    if why is not None and not overwrite:
        _note(
            f"{out} holds an unfinished run ({why}); replacing it, since a lesson cannot be "
            "resumed (it is put back if this run stops too)"
        )
    aside = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.old-"))
    out.replace(aside / out.name)
    return aside


def _refuse_live_run(out: Path, overwrite: bool) -> None:
    """Refuse ``out`` while the process of its run still runs, in one line.

    Why: replacing it would mix two runs' files (the running one writes into ``out`` by name).
    A run started on another host cannot be seen from here: ``overwrite`` says it has ended.
    """
    owner = _owner(out)
    if owner is None or owner.get("stopped"):
        return
    pid, host = owner.get("pid"), owner.get("host")
    if host != socket.gethostname():
        if overwrite:
            return
        raise UserInputError(
            f"{out} holds a run started on host {host!r} (pid {pid}), which this machine cannot "
            "check; wait for it to finish, or pass --overwrite if it no longer runs"
        )
    if _alive(owner):
        raise UserInputError(
            f"{out} holds a run still in progress (pid {pid}); wait for it to finish or stop it "
            f"(kill {pid}), then run the command again"
        )


def _name_runs_set_aside(out: Path) -> None:
    """Name each run an interrupted ``--overwrite`` of ``out`` left set aside, and what to do with it.

    Why: a SIGKILL (or a power cut) gives the command no chance to put the old run back, and the
    hidden ``.NAME.old-XXXX/`` folder is mentioned nowhere else; it may be the only complete run,
    so it is never deleted here.
    """
    for leftover in _set_aside_runs(out):
        old, folder, target = (shlex.quote(str(p)) for p in (leftover, leftover.parent, out))
        print(
            terminal_text(
                f"agentenv: warning: {leftover} is a run that an interrupted --overwrite of {out} "
                f"set aside and could not put back; to restore it: rm -rf {target} && mv {old} "
                f"{target} && rmdir {folder}; if you do not need it: rm -rf {folder}"
            ),
            file=sys.stderr,
        )


def _set_aside_runs(out: Path) -> list[Path]:
    """The runs that ``--overwrite`` moved into ``.NAME.old-XXXX/NAME`` beside ``out``."""
    if not out.name or not out.parent.is_dir():
        return []
    pattern = f".{glob.escape(out.name)}.old-*"
    return sorted(d / out.name for d in out.parent.glob(pattern) if (d / out.name).is_dir())


def _first_missing(path: Path) -> Path | None:
    """The outermost folder of ``path`` that does not exist yet (what this command creates), or None."""
    missing = None
    for folder in (path, *path.parents):
        if folder.exists():
            break
        missing = folder
    return missing


def _remove_start(out: Path, made: Path | None) -> bool:
    """Remove a stopped lesson's start files when they are all it wrote, and the folders it made.

    Why: a lesson that stops before it writes anything (most often a missing extra, whose message
    says what to install) would otherwise leave a run behind for the rerun after the install to
    replace; only what this command created goes (an empty ``--out`` given is kept).
    """
    if not out.is_dir():
        return True
    names = {entry.name for entry in out.iterdir()}
    if not names <= {MARKER, RUNNING}:
        return False
    for name in names:
        (out / name).unlink(missing_ok=True)
    folder = out
    while made is not None and folder.is_relative_to(made):
        try:
            folder.rmdir()
        except OSError:  # not empty: something else writes there
            break
        if folder == made:
            break
        folder = folder.parent
    return True


def _keep_unfinished(out: Path, err: BaseException) -> None:
    """Mark the run in ``out`` stopped (so a rerun replaces it at once) and say what it keeps."""
    owner = {**(_owner(out) or {}), "stopped": type(err).__name__}
    with contextlib.suppress(OSError):
        write_atomic(out / RUNNING, json.dumps(owner) + "\n")
    _note(f"{out} keeps the files of this unfinished run; the same command run again replaces them")


def _note(text: str) -> None:
    print(terminal_text(f"agentenv: note: {text}"), file=sys.stderr)


def _this_process() -> dict[str, Any]:
    """What tells this process from any other, later one: pid, host and (Linux) start time."""
    pid = os.getpid()
    return {"pid": pid, "host": socket.gethostname(), "started": _process_start(pid)}


def _owner(out: Path) -> dict[str, Any] | None:
    """The :data:`RUNNING` record of ``out``, or None (none, or unreadable)."""
    try:
        owner = json.loads((out / RUNNING).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return owner if isinstance(owner, dict) else None


def _alive(owner: Mapping[str, Any]) -> bool:
    """Whether the process of a :data:`RUNNING` record (on this host) still runs, and is not this one.

    A pid the kernel gave to a later process is told apart by its start time where ``/proc`` has it.
    """
    pid = owner.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except PermissionError:  # another user's process: it runs
        pass
    except (OSError, OverflowError):
        return False
    started = owner.get("started")
    return started is None or _process_start(pid) in (None, started)


def _process_start(pid: int) -> str | None:
    """The start time of ``pid`` in clock ticks since boot (``/proc/PID/stat`` field 22), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()  # after the command name, which may hold spaces
    return fields[19] if len(fields) > 19 else None


def label_summary(out: Path, quick: bool) -> dict[str, Any]:
    """Rewrite ``out/summary.json`` with ``smoke_run`` (and, for ``--quick``, ``smoke_note``) first; return it."""
    path = Path(out) / SUMMARY_FILE
    summary = json.loads(path.read_text(encoding="utf-8"))
    summary = {k: v for k, v in summary.items() if k not in ("smoke_run", "smoke_note")}
    head: dict[str, Any] = {"smoke_run": bool(quick)}
    if quick:
        head["smoke_note"] = SMOKE_NOTE
    labelled = {**head, **summary}
    write_atomic(path, json.dumps(labelled, indent=2) + "\n")
    return labelled


def _cells(block: Mapping[str, Any]) -> list[str]:
    """``name value [lo, hi]`` for each number of a block, its interval from ``name_ci`` (or ``ci``)."""
    cells = []
    for key, value in block.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or key.endswith("_ci"):
            continue
        ci = block.get(f"{key}_ci", block.get("ci") if key in ("mean", "accuracy") else None)
        text = f"{key} {value:.3f}" if isinstance(value, float) else f"{key} {value}"
        if (
            isinstance(ci, (list, tuple))
            and len(ci) == 2
            and all(isinstance(c, (int, float)) for c in ci)
        ):
            text += f" [{ci[0]:.3f}, {ci[1]:.3f}]"
        cells.append(text)
    return cells


def summary_table(summary: Mapping[str, Any]) -> str:
    """The headline figures of a lesson summary, one line per condition, arm or effect (two levels deep)."""
    rows: list[tuple[str, list[str]]] = []
    for name, block in summary.items():
        if name in _NOT_FIGURES or not isinstance(block, Mapping):
            continue
        cells = _cells(block)
        if cells:
            rows.append((name, cells))
            continue
        for sub, inner in block.items():
            if sub not in _NOT_FIGURES and isinstance(inner, Mapping) and _cells(inner):
                rows.append((f"{name}/{sub}", _cells(inner)))
    width = max((len(name) for name, _ in rows), default=0)
    return "\n".join(f"{name.ljust(width)}  {'; '.join(cells)}" for name, cells in rows)


def finish(out: Path, lesson: str, quick: bool) -> int:
    """Label the summary, print the table (headed by the smoke-run line for ``--quick``) and where it went."""
    summary = label_summary(out, quick)
    if quick:
        print(f"SMOKE RUN ({lesson}): {SMOKE_NOTE}")
    print(summary_table(summary))
    wall = (
        summary.get("meta", {}).get("wall_s") if isinstance(summary.get("meta"), Mapping) else None
    )
    took = f" in {wall:.0f} s" if isinstance(wall, (int, float)) else ""
    print(
        terminal_text(f"wrote {Path(out) / SUMMARY_FILE}{took}")
        + (" (smoke run: not results)" if quick else "")
    )
    return 0
