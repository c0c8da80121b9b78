"""JSON objects with one value per key, for text whose reading must be unambiguous.

Why: JSON leaves a repeated key's meaning open (Python keeps the last value, other parsers the
first, some both), so ``{"answer": "4", "answer": "5"}`` or a task row with two ``"answer"``
fields has no one reading. Agent actions, task files and phenopackets are read with
:func:`unique_keys` as the ``object_pairs_hook``, and such text is refused, naming the key.

Example:
    >>> loads_unique('{"a": 1, "b": {"c": 2}}')
    {'a': 1, 'b': {'c': 2}}
    >>> loads_unique('{"a": 1, "a": 2}')
    Traceback (most recent call last):
    ...
    agentenv.engine.strict_json.RepeatedKey: the key 'a' appears twice in one object (write it once)
"""

from __future__ import annotations

import json
from typing import Any


class RepeatedKey(ValueError):
    """A JSON object that names one key twice."""


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` that builds the dict, refusing a key written twice (:class:`RepeatedKey`)."""
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise RepeatedKey(
                    f"the key {key[:40]!r} appears twice in one object (write it once)"
                )
            seen.add(key)
    return value


def loads_unique(text: str | bytes) -> Any:
    """``json.loads`` that refuses an object naming a key twice (:class:`RepeatedKey`)."""
    return json.loads(text, object_pairs_hook=unique_keys)
