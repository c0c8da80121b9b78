"""What the control-byte tests share: the hostile name, what must never be printed raw, how the
terminal shows it, and a run of ``agentenv``'s ``main`` with its output captured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentenv.cli.main import main

EVIL = "run\x1b]0;OWNED\x07\x1b[2K\rwrote board.md\x1b[8m\u202e\x9b"
"""A file or folder name (no slash): OSC title, BEL, erase line, carriage return, a fake line,
hidden text, a right-to-left override and a C1 CSI."""
RAW = set("\x1b\x07\r\x9b\u202e\u2066\x00\x7f\x85")
"""What must never be printed raw."""
SHOWN = "run\\x1b]0;OWNED\\x07\\x1b[2K\\x0dwrote board.md\\x1b[8m\\u202e\\x9b"
"""``EVIL`` as the terminal shows it."""


def raw_in(text: str) -> set[str]:
    """The characters of :data:`RAW` that ``text`` holds."""
    return RAW & set(text)


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``agentenv argv``: (exit status, stdout, stderr)."""
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's usage errors
        code = exit_.code if isinstance(exit_.code, int) else 1
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def media_rows(path: Path, rows: list[dict] | None = None) -> Path:
    """``path`` written as a MediaSearch task file of ``rows`` (two people questions by default)."""
    rows = rows or [
        {"id": "people-01", "question": "blomkamp's district 9, what year", "answer": "2009"},
        {"id": "people-02", "question": "how long is nolan's interstellar", "answer": "169"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
