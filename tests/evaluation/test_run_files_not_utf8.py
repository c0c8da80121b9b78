"""A run file that is not UTF-8 is called that, not "not JSON" (nor read as UTF-16).

Why: ``json.loads`` on bytes guesses UTF-16 from a leading ``\\xff\\xfe``, so a summary of those
bytes was refused as ``line 1: not JSON (Expecting value)``, and a UTF-16 file of valid JSON was
read; agentenv writes UTF-8 only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentenv.evaluation.run_files import RunFileError, parse_object, read_json_object


@pytest.mark.parametrize(
    "raw", [b"\xff\xfe{}", json.dumps({"a": 1}).encode("utf-16"), b'{"a": "\xe9"}']
)
def test_bytes_that_are_not_utf8_are_named_so(raw: bytes, tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    path.write_bytes(raw)
    with pytest.raises(RunFileError, match=r"summary.json: not UTF-8 text, not a summary"):
        read_json_object(path, "a summary")
    with pytest.raises(RunFileError, match=r"^episodes.jsonl:4: not UTF-8 text$"):
        parse_object(raw, "episodes.jsonl:4")


def test_utf8_with_or_without_a_byte_order_mark_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    for raw in (b'{"a": "\xc3\xa9"}', b'\xef\xbb\xbf{"a": "\xc3\xa9"}'):
        path.write_bytes(raw)
        assert read_json_object(path, "a summary") == {"a": "é"}
        assert parse_object(raw, "x:1") == {"a": "é"}
