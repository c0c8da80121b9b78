"""``read_chat_jsonl`` reads an ``export-sft`` file under the run files' bounds, naming a bad line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentenv.data.chat_dataset import read_chat_jsonl
from agentenv.errors import UserInputError

ROW = {"messages": [{"role": "user", "content": "Who directed Heat?"}]}


def test_rows_read_back_and_blank_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps(ROW) + "\n\n" + json.dumps(ROW))  # no final newline
    assert read_chat_jsonl(path) == [ROW, ROW]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"messages": []}\n{"messages": \n', "line 2: not JSON"),
        ('{"messages": []}\n[1]\n', "line 2: a JSON list where a chat row"),
        ('{"messages": "hi"}\n', "line 1: expected a chat row"),
        ("[" * 100_000 + "\n", "line 1: JSON nested too deeply"),
    ],
)
def test_a_bad_line_is_one_error_naming_file_and_line(
    tmp_path: Path, text: str, fragment: str
) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text(text)
    with pytest.raises(UserInputError) as err:
        read_chat_jsonl(path)
    assert fragment in str(err.value) and str(path) in str(err.value)


def test_a_fifo_is_refused_before_it_is_opened(tmp_path: Path) -> None:
    """Opening a FIFO with no writer blocked the reader forever."""
    path = tmp_path / "chat.jsonl"
    os.mkfifo(path)
    with pytest.raises(UserInputError, match="a FIFO, not a regular file"):
        read_chat_jsonl(path)
