"""An export is read back only as ``export-sft`` wrote it: edits, truncation and empty exports are
refused naming the file, where the trainer used to train on them or fail deep inside TRL."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("tokenizers")

from agentenv.cli.main import main  # noqa: E402
from agentenv.data.export_files import read_export  # noqa: E402
from agentenv.errors import UserInputError  # noqa: E402


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sft") / "export"
    argv = ["export-sft", "MediaSearch-v0", "--episodes", "3", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    return out


def _copy(export: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(export, copy)
    return copy


def test_an_export_reads_back_whole(export: Path) -> None:
    manifest, rows = read_export(export)
    assert len(rows) == manifest["kept"] == 3
    assert rows[0]["messages"][0]["role"] == "system"


def test_an_edited_chat_file_is_refused(export: Path, tmp_path: Path) -> None:
    copy = _copy(export, tmp_path)
    chat = copy / "chat.jsonl"
    lines = chat.read_text(encoding="utf-8").splitlines(keepends=True)
    chat.write_text(lines[0][:200] + "\n" + "".join(lines[1:]), encoding="utf-8")  # truncated
    with pytest.raises(UserInputError, match=r"chat.jsonl: changed since it was exported"):
        read_export(copy)


def test_rows_missing_under_a_matching_checksum_are_counted(export: Path, tmp_path: Path) -> None:
    """A manifest rewritten to match a cut file still disagrees with itself on the row count."""
    copy = _copy(export, tmp_path)
    chat = copy / "chat.jsonl"
    chat.write_text(chat.read_text(encoding="utf-8").splitlines(keepends=True)[0], "utf-8")
    manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    manifest["files"]["chat.jsonl"] = hashlib.sha256(chat.read_bytes()).hexdigest()
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(UserInputError, match=r"1 rows, but manifest.json says 3 were kept"):
        read_export(copy)


@pytest.mark.parametrize(
    ("manifest_text", "said"),
    [("", "not a JSON manifest"), ("[1]", "expected a JSON object"), ("{}", "no 'env_id'")],
)
def test_a_manifest_that_is_not_one_is_named(
    export: Path, tmp_path: Path, manifest_text: str, said: str
) -> None:
    copy = _copy(export, tmp_path)
    (copy / "manifest.json").write_text(manifest_text, encoding="utf-8")
    with pytest.raises(UserInputError, match=said):
        read_export(copy)
    with pytest.raises(UserInputError, match="no such folder"):
        read_export(tmp_path / "nowhere")
