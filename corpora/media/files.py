"""Small, safe file helpers for cached corpora: hashing, atomic writes, checked payloads.

Why: caches are shared by parallel env workers and may be interrupted mid
write. The mechanism (a one-line header with the body's sha256, written
through a temporary file and a rename) is the package's one checksummed
cache, :mod:`agentenv.storage.checksummed_cache`; this module binds it to the media
cache folder, whose older versions left temporaries named ``<name><random>.tmp``.

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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentenv.storage.checksummed_cache import pack, unpack
from agentenv.storage.checksums import sha256_file
from agentenv.storage.paths import atomic_write_bytes

__all__ = ["file_sha256", "pack", "paused_gc", "unpack", "write_atomic"]


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
    """Write ``data`` to ``path`` atomically, with normal file permissions (see :func:`agentenv.storage.paths.atomic_write_bytes`)."""
    atomic_write_bytes(path, data, legacy=_LEGACY_TEMPS)
