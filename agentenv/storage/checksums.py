"""File checksums: how downloads, caches and exports are verified.

Example:
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile() as f:
    ...     sha256_file(Path(f.name))
    'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import BinaryIO


def sha256_file(path: Path, chunk_size: int = 1 << 20) -> str:
    """Hex sha256 of a file, read in chunks so memory stays flat."""
    with open(path, "rb") as handle:
        return sha256_handle(handle, chunk_size)


def sha256_handle(handle: BinaryIO, chunk_size: int = 1 << 20) -> str:
    """Hex sha256 of what is left to read from an open binary file, in chunks."""
    digest = hashlib.sha256()
    while block := handle.read(chunk_size):
        digest.update(block)
    return digest.hexdigest()
