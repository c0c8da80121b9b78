"""Generic readers of the public text a structured menu sees: JSON tool outputs and bounded scores.

Why a module of its own: everything a structured policy knows comes through
readers that take a string the env showed the agent (the first user prompt,
or a tool output) and nothing else; none of them is handed a task, an env or
``info``. The family-specific readers (prompt formats, passage formats) live
with each family's menus (``envs/<family>/structured_reading.py``); these two
are shared by all.

Example:
    >>> json_or_none('{"results": []}'), json_or_none("Error: no such title")
    ({'results': []}, None)
    >>> squash(20.0, 20.0)
    0.5
"""

from __future__ import annotations

import json
from typing import Any


def json_or_none(text: str) -> Any:
    """A tool output decoded as JSON, or ``None`` for an error message or other text."""
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return None


def squash(score: float, scale: float) -> float:
    """A non-negative score mapped into [0, 1) (``x / (x + scale)``), so features stay bounded."""
    score = max(float(score), 0.0)
    return score / (score + scale)
