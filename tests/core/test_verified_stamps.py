"""A verified cache file is not hashed again until it changes, and any change is still caught.

Why: hashing every cache file on every warm ``gym.make`` was its largest cost
(55 ms of a rare-disease make). Skipping the hash must never let a damaged or
edited file through, including one edited within a timestamp tick of its check.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agentenv.storage import verified_stamps
from agentenv.storage.checksummed_cache import ChecksummedDir, pack_bytes, unpack_bytes
from agentenv.storage.paths import home_at


@pytest.fixture
def home(tmp_path: Path):  # type: ignore[no-untyped-def]
    with home_at(tmp_path / "home") as root:
        yield root


def _later(monkeypatch: pytest.MonkeyPatch, seconds: float = 3.0) -> None:
    """Make the stamp's clock read ``seconds`` later, as if the file had settled."""
    real = time.time_ns
    monkeypatch.setattr(verified_stamps.time, "time_ns", lambda: real() + int(seconds * 1e9))


def _counting_hashes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = verified_stamps._hash_handle

    def counted(handle):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(handle)

    monkeypatch.setattr(verified_stamps, "_hash_handle", counted)
    return calls


def test_a_settled_file_is_hashed_once_then_read_from_its_stamp(
    home, tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "rows.npy"
    data.write_bytes(b"x" * 5000)
    _later(monkeypatch)
    calls = _counting_hashes(monkeypatch)
    first = verified_stamps.verified_sha256(data)
    assert verified_stamps.verified_sha256(data) == first
    assert len(calls) == 1


def test_a_file_just_written_is_never_stamped(home, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A file rewritten within a timestamp tick can keep its size and times: only settled files are stamped."""
    data = tmp_path / "rows.npy"
    data.write_bytes(b"abc")
    verified_stamps.verified_sha256(data)
    assert not (home / "verified").exists()


def test_an_edit_after_the_stamp_is_caught_even_with_its_mtime_put_back(
    home, tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "rows.npy"
    data.write_bytes(b"a" * 4096)
    before = data.stat()
    _later(monkeypatch)
    good = verified_stamps.verified_sha256(data)
    time.sleep(
        0.05
    )  # past the file system's timestamp tick, as real time is between a check and an edit
    with open(data, "r+b") as handle:  # same size, same inode
        handle.seek(100)
        handle.write(b"b")
    os.utime(data, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert data.stat().st_size == before.st_size and data.stat().st_mtime_ns == before.st_mtime_ns
    assert verified_stamps.verified_sha256(data) != good


def test_a_malformed_or_foreign_stamp_is_a_full_hash(home, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "rows.npy"
    data.write_bytes(b"abc")
    _later(monkeypatch)
    verified_stamps.verified_sha256(data)
    (stamp,) = (home / "verified").iterdir()
    calls = _counting_hashes(monkeypatch)
    for text in ("{", "[]", '{"what": "file"}'):
        stamp.write_text(text)
        assert verified_stamps.verified_sha256(data).startswith("ba7816bf")
    assert len(calls) == 3


def test_a_pack_damaged_after_its_stamp_is_rebuilt(home, tmp_path, monkeypatch, caplog) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "catalog.bin"
    path.write_bytes(pack_bytes({"format": 1}, b"0123456789" * 100))
    _later(monkeypatch)
    assert unpack_bytes(path, {"format": 1}) is not None  # verified and stamped
    time.sleep(0.05)
    raw = bytearray(path.read_bytes())
    raw[-5] ^= 1
    with open(path, "r+b") as handle:
        handle.write(bytes(raw))
    assert unpack_bytes(path, {"format": 1}) is None
    assert "does not match its sha256" in caplog.text


def test_a_directory_entry_damaged_after_its_stamp_is_refused(home, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    entry = ChecksummedDir("MANIFEST.json", what="index cache entry")
    root = tmp_path / "index"

    def save(tmp: Path) -> None:
        (tmp / "docs.npy").write_bytes(b"d" * 2048)

    entry.publish(root, {"format": 1}, save)
    _later(monkeypatch)
    assert entry.problem(root, {"format": 1}) is None
    time.sleep(0.05)
    with open(root / "docs.npy", "r+b") as handle:
        handle.write(b"e")
    assert entry.problem(root, {"format": 1}) == "corrupt (docs.npy does not match its sha256)"
