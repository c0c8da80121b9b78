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


def sha256_file(path: Path, chunk_size: int = 1 << 20) -> str:
    """Hex sha256 of a file, read in chunks so memory stays flat."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk_size):
            digest.update(block)
    return digest.hexdigest()
