"""A report file a command writes (``--out`` / ``--json``): checked before the work, never
written over something the user has, unless they say so.

Why: ``data shift-check A B --out A`` replaced the task file A with its report, and
``simulator-check --json notes.txt`` replaced notes.txt, each after the whole run; a folder given
as the file failed only after the run. The report is then written as run files are
(:func:`agentenv.evaluation.run_dir.write_atomic`).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from agentenv.errors import UserInputError


def add_overwrite_flag(parser: argparse.ArgumentParser, flag: str) -> None:
    """``--overwrite``: let the report replace an existing file."""
    parser.add_argument(
        "--overwrite", action="store_true", help=f"replace the file {flag} names if it exists"
    )


def check_report_file(
    path: Path | None, flag: str, *, overwrite: bool, inputs: Sequence[Path] = ()
) -> None:
    """Refuse, before any work, a report path that is a folder, not a regular file, one of the
    inputs, in a missing folder, or an existing file without ``overwrite``."""
    if path is None:
        return
    if not str(path).strip():
        raise UserInputError(f"{flag}: an empty path names no file")
    if path.is_dir():
        raise UserInputError(f"{flag} {path}: is a folder; give a file name")
    if path.exists() and not path.is_file():
        # a FIFO, a device, a socket: replacing the node (as root, even /dev/null) is never meant
        raise UserInputError(
            f"{flag} {path}: is not a regular file (a FIFO, a device or a socket); give a file name"
        )
    if any(path.exists() and Path(i).exists() and os.path.samefile(path, i) for i in inputs):
        raise UserInputError(f"{flag} {path}: is one of the inputs; write the report elsewhere")
    if path.exists() and not overwrite:
        raise UserInputError(
            f"{flag} {path}: exists; pass --overwrite to replace it, or choose another file"
        )
    if not path.parent.is_dir():
        raise UserInputError(f"{flag} {path}: no folder {path.parent}; create it first")
