"""On-disk index directories: which class reads a kind, and the sha256 manifest.

Every back-end saves itself into a directory with ``save(path)`` and reads
it back with ``Class.load(path)``. This module maps a kind name to its
class (imported lazily, so that reading a BM25 index never imports faiss)
and lays out ``MANIFEST.json``: the sha256 of every file, so that a
truncated or altered index is detected instead of trusted (checked by the
package's one checksummed-cache mechanism, :mod:`agentenv.storage.checksummed_cache`).

Example:
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "a.bin").write_bytes(b"abc")
    >>> ENTRY.write_manifest(d, {"kind": "demo"})["files"]["a.bin"][:12]
    'ba7816bf8f01'
    >>> ENTRY.problem(d, {"kind": "demo"}) is None
    True
    >>> _ = (d / "a.bin").write_bytes(b"abd")
    >>> ENTRY.problem(d, {"kind": "demo"})
    'corrupt (a.bin does not match its sha256)'
    >>> _ = (d / "stray.bin").write_bytes(b"?")
    >>> ENTRY.problem(d, {"kind": "demo"})
    'corrupt (stray.bin is not in MANIFEST.json)'
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from agentenv.storage.checksummed_cache import ChecksummedDir

__all__ = ["BACKENDS", "ENTRY", "LEGACY_TEMPS", "MANIFEST", "backend_class", "load_backend"]

MANIFEST = "MANIFEST.json"

# kind -> "module:Class"; every class has ``save(path)`` and ``load(path)``.
BACKENDS: dict[str, str] = {
    "bm25": "agentenv.retrieval.bm25:BM25Retriever",
    "dense": "agentenv.retrieval.dense:DenseRetriever",
    "hybrid": "agentenv.retrieval.hybrid:HybridRetriever",
}


def backend_class(kind: str) -> Any:
    """The class that reads and writes indexes of ``kind``."""
    try:
        module, name = BACKENDS[kind].split(":")
    except KeyError:
        raise ValueError(
            f"no on-disk format for back-end {kind!r}; known: {sorted(BACKENDS)}"
        ) from None
    return getattr(importlib.import_module(module), name)


def load_backend(kind: str, path: str | Path) -> Any:
    """Load the index of ``kind`` saved in ``path``."""
    return backend_class(kind).load(Path(path))


LEGACY_TEMPS = (".*-*",)
"""Temporaries of versions before owned names (``.<entry>-*``, ``.trash-*``): swept once stale."""

ENTRY = ChecksummedDir(MANIFEST, legacy=LEGACY_TEMPS, what="index cache entry")
"""An index directory: every file hashed in the manifest, and no file unlisted (an index is exactly what it saved)."""
