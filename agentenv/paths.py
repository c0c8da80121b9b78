"""Where agentenv keeps what it builds: corpora caches and indexes.

Everything built at run time lives under one directory so that a user can
inspect it, share it between workers, or delete it to force a rebuild.

Example:
    >>> import os
    >>> os.environ["AGENTENV_HOME"] = "/tmp/agentenv-doc"
    >>> str(agentenv_home())
    '/tmp/agentenv-doc'
"""

from __future__ import annotations

import os
from pathlib import Path


def agentenv_home() -> Path:
    """Return ``$AGENTENV_HOME`` (default ``~/.cache/agentenv``), without creating it."""
    root = os.environ.get("AGENTENV_HOME")
    if root:
        return Path(root).expanduser()
    return Path("~/.cache/agentenv").expanduser()


def cache_dir(*parts: str) -> Path:
    """Return (and create) a sub-directory of the agentenv home."""
    path = agentenv_home().joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path
