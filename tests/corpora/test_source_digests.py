"""The HPO source digests are remembered across processes only while the files' stat is unchanged."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from agentenv.corpora import hpo_files


def test_an_edited_file_is_hashed_again_even_with_its_size_and_mtime_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTENV_HOME", str(tmp_path / "home"))
    source = tmp_path / "hp.obo"
    source.write_bytes(b"format-version: 1.2\n")
    first = hpo_files.source_sha256([source])
    assert first == [hashlib.sha256(b"format-version: 1.2\n").hexdigest()]
    assert (tmp_path / "home" / "digests" / "hpo-sources.json").is_file()

    hashed: list[Path] = []
    real = hpo_files.sha256_file
    monkeypatch.setattr(hpo_files, "sha256_file", lambda p: hashed.append(p) or real(p))
    assert (
        hpo_files.source_sha256([source]) == first and hashed == []
    )  # unchanged: the memo answers

    before = os.stat(source)
    source.write_bytes(b"format-version: 1.3\n")  # same size
    os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))  # mtime put back; ctime moves on
    assert hpo_files.source_sha256([source]) == [
        hashlib.sha256(b"format-version: 1.3\n").hexdigest()
    ]
    assert hashed == [source.resolve()]


def test_a_damaged_memo_only_means_hashing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTENV_HOME", str(tmp_path / "home"))
    source = tmp_path / "phenotype.hpoa"
    source.write_bytes(b"#date: 2025-01-16\n")
    expected = [hashlib.sha256(b"#date: 2025-01-16\n").hexdigest()]
    assert hpo_files.source_sha256([source]) == expected
    memo = tmp_path / "home" / "digests" / "hpo-sources.json"
    memo.write_bytes(memo.read_bytes()[:-3])
    assert hpo_files.source_sha256([source]) == expected
