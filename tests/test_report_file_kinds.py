"""A report path (``--json``, ``--out`` of a report) that names a FIFO, a device or a socket is refused,
even with ``--overwrite``: the command would replace the node itself (run as root, ``/dev/null``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentenv.cli.report_file import check_report_file
from agentenv.errors import UserInputError


def test_a_fifo_report_path_is_refused_even_with_overwrite(tmp_path: Path) -> None:
    fifo = tmp_path / "report.json"
    os.mkfifo(fifo)
    with pytest.raises(UserInputError, match=r"--json .*report.json: is not a regular file"):
        check_report_file(fifo, "--json", overwrite=True)
    assert fifo.is_fifo()


def test_a_regular_report_file_is_replaced_only_with_overwrite(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    report.write_text("{}")
    check_report_file(report, "--json", overwrite=True)
    with pytest.raises(UserInputError, match="exists; pass --overwrite"):
        check_report_file(report, "--json", overwrite=False)
