"""Remember which cache files were verified, so that a warm load need not hash them again.

Why: every cache entry proves itself by its sha256 before it is used
(:mod:`agentenv.storage.checksummed_cache`). On a warm ``gym.make`` that hashing was
the largest single cost: about 55 ms of a rare-disease make (19 MB of ranker
rows, 8 MB of universe arrays) and 20 ms of a media one, paid again by every
process that reads files nobody has touched since they were last checked.

A **stamp** records that the file with a given identity had a given sha256
when it was last hashed. The identity is what the file system changes on any
write: device, inode, size, modification time and *change* time (``ctime``,
which no user call can set back, unlike ``mtime``). A later read whose file
has the same identity takes the recorded digest; any write, rename onto it or
``touch`` gives a new identity and a full hash.

One hole remains, and it is closed as git closes it for its index ("racily
clean" entries): file-system timestamps are coarse (a few ms on Linux), so a
file rewritten within the same tick, at the same size, could keep its
identity. A stamp is therefore written only for a file whose ``ctime`` is at
least :data:`SETTLED_S` old; a write after the stamp necessarily moves
``ctime`` past it. What a stamp cannot see is damage below the file system
(a bad disk block): that is what the next full hash finds, after any write,
and what ``agentenv`` never tried to detect between two reads of one process
either.

Stamps live in ``$AGENTENV_HOME/verified/``, one small JSON file per cache
file, named by the hash of its absolute path. They are hints: a missing,
unreadable or malformed stamp is a full hash, and a home that cannot be
written just keeps hashing.

Example:
    >>> import tempfile
    >>> from agentenv.storage.paths import home_at
    >>> root = Path(tempfile.mkdtemp())
    >>> data = root / "x.bin"
    >>> _ = data.write_bytes(b"abc")
    >>> with home_at(root / "home"):
    ...     verified_sha256(data)[:12]  # hashed (too new to be stamped)
    'ba7816bf8f01'
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from agentenv.storage.checksums import sha256_handle
from agentenv.storage.paths import agentenv_home, atomic_write_bytes

__all__ = ["SETTLED_S", "body_digest", "remember", "stamped_digest", "verified_sha256"]

SETTLED_S = 2.0
"""A file changed more recently than this is never stamped (see the module docstring)."""

_hash_handle = sha256_handle
"""How an unstamped file is hashed (a module name, so tests can count the calls)."""


def _identity(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _stamp_path(path: Path) -> Path:
    name = hashlib.sha256(os.fsencode(os.path.abspath(path))).hexdigest()[:40]
    return agentenv_home() / "verified" / f"{name}.json"


def stamped_digest(path: Path, st: os.stat_result, what: str) -> str | None:
    """The sha256 a stamp records for ``path`` in the state ``st`` (``what``: which bytes), else ``None``."""
    try:
        stamp = json.loads(_stamp_path(path).read_bytes())
    except (OSError, ValueError):
        return None
    if (
        isinstance(stamp, dict)
        and stamp.get("what") == what
        and stamp.get("path") == os.path.abspath(path)
        and stamp.get("identity") == _identity(st)
        and isinstance(stamp.get("sha256"), str)
    ):
        return str(stamp["sha256"])
    return None


def remember(path: Path, st: os.stat_result, what: str, digest: str) -> None:
    """Stamp ``path`` (in the state ``st``) as holding ``digest``, if it has settled; never raises."""
    if time.time_ns() - st.st_ctime_ns < SETTLED_S * 1e9:
        return
    stamp = {
        "path": os.path.abspath(path),
        "identity": _identity(st),
        "what": what,
        "sha256": digest,
    }
    target = _stamp_path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, json.dumps(stamp).encode())
    except OSError:
        pass  # a read-only home: the next read hashes again


def verified_sha256(path: Path) -> str:
    """The sha256 of the file at ``path``: from its stamp when the file is unchanged since, else hashed.

    ``OSError`` (missing, unreadable) propagates, as from :func:`agentenv.storage.checksums.sha256_file`.
    """
    with open(path, "rb") as handle:
        st = os.fstat(handle.fileno())
        known = stamped_digest(path, st, "file")
        if known is not None:
            return known
        digest = _hash_handle(handle)
        after = os.fstat(handle.fileno())
    if _identity(after) == _identity(st):
        remember(path, st, "file", digest)
    return digest


def body_digest(path: Path, st: os.stat_result, claimed: str, hash_body: Callable[[], str]) -> str:
    """The sha256 of a pack's body: ``claimed`` (its header's) when a stamp vouches for it, else ``hash_body()``.

    A body that hashes to ``claimed`` is stamped, so that the next read of the
    unchanged file skips the hash.
    """
    if stamped_digest(path, st, "body") == claimed:
        return claimed
    digest = hash_body()
    if digest == claimed:
        remember(path, st, "body", digest)
    return digest
