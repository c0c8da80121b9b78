"""How a MediaSearch gold reads as text: its answer (the family's ``Family.gold_text``).

The judge puts this text next to the agent's answer, so it is the answer a
person would write: a title, a name, or a number. Aliases are left out; the
judge is asked whether two answers are the same, not to match a list.

Example:
    >>> gold_text({"answer": "Alien", "aliases": ["Alien (1979)"], "answer_type": "title"})
    'Alien'
    >>> gold_text({"answer": 1979})
    '1979'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def gold_text(gold: Mapping[str, Any]) -> str:
    """The gold ``answer``; a non-string answer (a count, a year) as JSON."""
    if not isinstance(gold, Mapping) or gold.get("answer") is None:
        raise ValueError(f"a MediaSearch gold has an 'answer'; got {str(gold)[:120]}")
    value = gold["answer"]
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
