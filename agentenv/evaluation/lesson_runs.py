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
  continue from), so there is no ``--resume``: the refusal says so.

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
import json
import shutil
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

__all__ = ["MARKER", "SMOKE_NOTE", "finish", "label_summary", "lesson_output", "summary_table"]

SMOKE_NOTE = (
    "--quick is a smoke run: it checks that the lesson runs end to end on a tiny budget; "
    "its figures are not results (run without --quick for those)"
)
MARKER = "reproduce.json"
"""Written first into a lesson's folder: what makes a folder a run that ``--overwrite`` may replace."""
_NOT_FIGURES = ("meta", "baselines", "shift", "per_seed", "train")


def holds_anything(path: Path) -> bool:
    """Whether ``path`` is a folder with something in it (an empty or missing folder holds no run)."""
    return path.is_dir() and any(path.iterdir())


def holds_run(path: Path) -> bool:
    """Whether ``path`` holds a lesson run (or an ``eval`` run): its :data:`MARKER` or a ``summary.json``."""
    return (path / MARKER).is_file() or (path / SUMMARY_FILE).is_file()


@contextlib.contextmanager
def lesson_output(
    out: Path, lesson: str, *, overwrite: bool = False, quick: bool = False
) -> Iterator[Path]:
    """The folder a lesson writes into, under the rules of the module docstring.

    Raises:
        UserInputError: ``out`` is a file, holds a run and ``overwrite`` is off, or holds other files.
    """
    out = Path(out)
    refuse_file(out)
    aside: Path | None = None
    if holds_anything(out):
        if not holds_run(out):
            raise UserInputError(
                f"{out} holds files that are not an agentenv run; give a new or empty --out "
                "(--overwrite replaces only a run)"
            )
        if not overwrite:
            raise UserInputError(
                f"{out} already holds a run; pass --overwrite to replace it or choose another "
                "--out (a lesson cannot be resumed: its training restarts from the first step)"
            )
        aside = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.old-"))
        out.replace(aside / out.name)
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_atomic(
            out / MARKER,
            json.dumps({"command": "agentenv reproduce", "lesson": lesson, "quick": quick}) + "\n",
        )
        with sigterm_as_interrupt():  # a scheduler's stop restores the old run as Ctrl-C does
            yield out
    except BaseException:
        if aside is not None:  # the new run failed or was stopped: the old one comes back whole
            shutil.rmtree(out, ignore_errors=True)
            (aside / out.name).replace(out)
            shutil.rmtree(aside, ignore_errors=True)
        raise
    if aside is not None:
        shutil.rmtree(aside, ignore_errors=True)


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
