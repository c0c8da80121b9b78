"""Small, safe file helpers for cached corpora: hashing, atomic writes, checked payloads.

Why: caches are shared by parallel env workers and may be interrupted mid
write. Writing through a temporary file and a rename means a reader sees a
whole old file or a whole new one; a one-line header with the body's sha256
means a damaged file is detected and rebuilt (with a warning naming it)
instead of trusted. The temporary file of a write that was killed is removed
by the next write to the same folder (see :func:`agentenv.paths.make_temp_file`).

Example:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "x.json"
    >>> write_atomic(path, pack({"format": 1}, [1, 2, 3]))
    >>> unpack(path, {"format": 1})
    [1, 2, 3]
    >>> unpack(path, {"format": 2}) is None
    True
"""

from __future__ import annotations

import gc
import hashlib
import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentenv.checksums import sha256_file
from agentenv.paths import make_temp_file

log = logging.getLogger(__name__)


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while loading many small objects.

    Loading a cache allocates ~10^5 tuples; the collector would scan them
    repeatedly while they are young, roughly doubling the load time.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


file_sha256 = sha256_file
"""Hex sha256 of a file (the name this module has always used)."""


_LEGACY_TEMPS = ("*.tmp",)
"""Temporaries of versions before owned names (``<name><random>.tmp``): swept once stale."""


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename.

    Concurrent workers may build the same cache; a rename is atomic, so a
    reader sees either the old complete file or the new complete file.
    """
    fd, tmp = make_temp_file(path.parent, path.name, legacy=_LEGACY_TEMPS)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def pack(header: dict[str, Any], body: Any) -> bytes:
    """Serialise ``body`` after a one-line header that carries the body's sha256."""
    blob = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    head = dict(header, body_sha256=hashlib.sha256(blob).hexdigest())
    return json.dumps(head, sort_keys=True).encode() + b"\n" + blob


def unpack(path: Path, header: dict[str, Any]) -> Any | None:
    """Return the body of a :func:`pack` file whose header matches, else ``None``.

    ``None`` (missing, truncated, corrupt or stale file) means "rebuild"; every
    caller rebuilds then, so a file that exists but is unusable is logged as
    being rebuilt (a missing one is a plain first build, and is not).
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as err:
        return _rebuilding(path, f"unreadable: {err.strerror or err}")
    head_raw, _, blob = raw.partition(b"\n")
    try:
        head = json.loads(head_raw)
    except ValueError:
        return _rebuilding(path, "corrupt: its header is not JSON")
    if not isinstance(head, dict):
        return _rebuilding(path, "corrupt: its header is not an object")
    stale = sorted(k for k, v in header.items() if head.get(k) != v)
    if stale:
        return _rebuilding(path, f"stale or corrupt: header {', '.join(stale)} does not match")
    if head.get("body_sha256") != hashlib.sha256(blob).hexdigest():
        return _rebuilding(path, "corrupt: its body does not match its sha256")
    try:
        return json.loads(blob)
    except ValueError:
        return _rebuilding(path, "corrupt: its body is not JSON")


def _rebuilding(path: Path, reason: str) -> None:
    """Log that the cache file ``path`` is unusable and will be rebuilt; return ``None`` (a miss)."""
    log.warning("cache file %s is %s; rebuilding it", path, reason)
    return None
