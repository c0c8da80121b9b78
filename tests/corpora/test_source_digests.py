"""The HPO source digests are remembered across processes only while the files are unchanged."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

from agentenv.corpora.hpo import files as hpo_files
from agentenv.storage import verified_stamps


def test_an_edited_file_is_hashed_again_even_with_its_size_and_mtime_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTENV_HOME", str(tmp_path / "home"))
    real_clock = time.time_ns  # as if the installed files had settled long ago
    monkeypatch.setattr(verified_stamps.time, "time_ns", lambda: real_clock() + 10**10)
    source = tmp_path / "hp.obo"
    source.write_bytes(b"format-version: 1.2\n")
    first = hpo_files.source_sha256([source])
    assert first == [hashlib.sha256(b"format-version: 1.2\n").hexdigest()]

    hashed: list[int] = []
    real = verified_stamps._hash_handle
    monkeypatch.setattr(verified_stamps, "_hash_handle", lambda h: hashed.append(1) or real(h))
    assert (
        hpo_files.source_sha256([source]) == first and hashed == []
    )  # unchanged: the stamp answers

    before = os.stat(source)
    time.sleep(0.05)  # past a timestamp tick
    source.write_bytes(b"format-version: 1.3\n")  # same size
    os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))  # mtime put back; ctime moves on
    assert hpo_files.source_sha256([source]) == [
        hashlib.sha256(b"format-version: 1.3\n").hexdigest()
    ]
    assert hashed == [1]


def test_a_damaged_stamp_only_means_hashing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTENV_HOME", str(tmp_path / "home"))
    real_clock = time.time_ns
    monkeypatch.setattr(verified_stamps.time, "time_ns", lambda: real_clock() + 10**10)
    source = tmp_path / "phenotype.hpoa"
    source.write_bytes(b"#date: 2025-01-16\n")
    expected = [hashlib.sha256(b"#date: 2025-01-16\n").hexdigest()]
    assert hpo_files.source_sha256([source]) == expected
    (stamp,) = (tmp_path / "home" / "verified").iterdir()
    stamp.write_bytes(stamp.read_bytes()[:-3])
    assert hpo_files.source_sha256([source]) == expected
