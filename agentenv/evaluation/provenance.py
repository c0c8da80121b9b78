"""Which code produced a result: the git commit of the checkout, or the package version where there is none.

Why: a lesson's ``summary.json`` recorded ``meta.commit: None``, so two summaries could not be told
apart by the code behind them. A git checkout gives its commit (marked when ``agentenv/`` or ``envs/``
hold uncommitted changes); an installed wheel has no git, so its version stands in, and
``commit_source`` says which of the two was recorded.

Example:
    >>> sorted(code_commit())
    ['commit', 'commit_source']
    >>> code_commit()["commit_source"] in ("git", "package version")
    True
"""

from __future__ import annotations

import subprocess
from pathlib import Path


def code_commit() -> dict[str, str]:
    """``{"commit": ..., "commit_source": "git" | "package version"}`` for the running agentenv."""
    root = Path(__file__).resolve().parents[2]
    try:
        commit = _git(root, "rev-parse", "HEAD")
        if commit:
            dirty = _git(root, "status", "--porcelain", "--", "agentenv", "envs")
            marked = commit + (" (with uncommitted changes)" if dirty else "")
            return {"commit": marked, "commit_source": "git"}
    except (OSError, subprocess.SubprocessError):
        pass
    from agentenv import __version__

    return {"commit": f"agentenv {__version__}", "commit_source": "package version"}


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10, check=False
    )
    return done.stdout.strip() if done.returncode == 0 else ""
