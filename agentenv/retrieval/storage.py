"""On-disk index directories: which class reads a kind, and the sha256 manifest.

Every back-end saves itself into a directory with ``save(path)`` and reads
it back with ``Class.load(path)``. This module maps a kind name to its
class (imported lazily, so that reading a BM25 index never imports faiss)
and writes/checks ``MANIFEST.json``: the sha256 of every file, so that a
truncated or altered index is detected instead of trusted.

Example:
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "a.bin").write_bytes(b"abc")
    >>> write_manifest(d, {"kind": "demo"})["files"]["a.bin"][:12]
    'ba7816bf8f01'
    >>> verify_manifest(d)["kind"]
    'demo'
    >>> _ = (d / "a.bin").write_bytes(b"abd")
    >>> verify_manifest(d) is None
    True
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from agentenv.checksums import sha256_file

__all__ = ["BACKENDS", "MANIFEST", "load_backend", "verify_manifest", "write_manifest"]

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
        raise ValueError(f"no on-disk format for back-end {kind!r}; known: {sorted(BACKENDS)}") from None
    return getattr(importlib.import_module(module), name)


def load_backend(kind: str, path: str | Path) -> Any:
    """Load the index of ``kind`` saved in ``path``."""
    return backend_class(kind).load(Path(path))


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and p.name != MANIFEST)


def write_manifest(root: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """Hash every file under ``root`` into ``root/MANIFEST.json`` (with ``meta``); return it."""
    manifest = {**meta, "files": {rel: sha256_file(root / rel) for rel in _files(root)}}
    (root / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True))
    return manifest


def verify_manifest(root: Path) -> dict[str, Any] | None:
    """The manifest if every listed file exists with its hash and no file is unlisted, else None."""
    try:
        manifest = json.loads((root / MANIFEST).read_text())
        files = manifest["files"]
        if sorted(files) != _files(root):
            return None
        for rel, digest in files.items():
            if sha256_file(root / rel) != digest:
                return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return manifest
