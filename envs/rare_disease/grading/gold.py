"""How a RareDiseaseDiagnosis gold reads as text: the accepted ids and the disease name (``Family.gold_text``).

The judge needs the name as well as the ids: an agent may answer a disease
by name, and an id alone tells a reader nothing.

Example:
    >>> gold_text({"diagnosis": ["OMIM:100600"], "name": "Acanthosis nigricans"})
    'OMIM:100600 (Acanthosis nigricans)'
    >>> gold_text({"diagnosis": ["OMIM:1", "OMIM:2"]})
    'OMIM:1 or OMIM:2'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def gold_text(gold: Mapping[str, Any]) -> str:
    """The ``diagnosis`` ids joined with "or", followed by the ``name`` in parentheses when there is one."""
    if not isinstance(gold, Mapping) or not gold.get("diagnosis"):
        raise ValueError(
            f"a RareDiseaseDiagnosis gold has a 'diagnosis' list; got {str(gold)[:120]}"
        )
    ids = " or ".join(str(d) for d in gold["diagnosis"])
    return f"{ids} ({gold['name']})" if gold.get("name") else ids
