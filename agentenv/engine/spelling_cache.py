"""Spelling indexes from a disk cache, so that no env builds one inside a step.

Why: the film catalog's title and person indexes take about 0.7 s to build
and the disease names 0.1 s; built on the first graded answer, that time
landed inside ``step`` (and in every vector-env worker). Loaded from a
checksummed cache entry under ``$AGENTENV_HOME/spelling`` they take tens of
milliseconds, so an env loads them at ``make``. An entry is keyed by the
source's checksum, :data:`~agentenv.engine.spelling.RULES_VERSION` and the family's
own rules version; a stale or damaged entry is rebuilt (see
:mod:`agentenv.storage.checksummed_cache`). The body is the index's JSON state as
:mod:`marshal` data: the same lists and strings, read about three times
faster than JSON (the film people's index: 41 -> 15 ms of every warm make).
"""

from __future__ import annotations

import gc
import logging
import marshal
from collections.abc import Callable, Sequence
from typing import Any

from agentenv.engine.spelling import RULES_VERSION, SpellingIndex, WordRule
from agentenv.storage.checksummed_cache import pack_bytes, unpack_bytes
from agentenv.storage.paths import atomic_write_bytes, cache_dir

CACHE_FORMAT = 2
"""2: a marshal body (``.bin``) instead of JSON (``.json``, format 1)."""

log = logging.getLogger(__name__)


def cached_spelling_index(
    name: str,
    source_checksum: str,
    family_version: str,
    build: Callable[[], SpellingIndex],
    rules: Sequence[tuple[str, WordRule]] = (),
) -> SpellingIndex:
    """The index ``build()`` makes, from the cache entry ``name`` when one matches, else built and stored.

    ``rules`` must be the word rules ``build`` uses (they are code, not data).
    """
    header = {
        "format": CACHE_FORMAT,
        "rules": RULES_VERSION,
        "family": family_version,
        "source_sha256": source_checksum,
        "name": name,
        "marshal": marshal.version,
    }
    path = cache_dir("spelling") / f"{name}.bin"
    enabled = gc.isenabled()
    gc.disable()  # tens of thousands of small containers: collection passes would triple the load time
    try:
        found = unpack_bytes(path, header)
        state = None
        if found is not None:
            try:
                state = marshal.loads(found[1])
            except (EOFError, TypeError, ValueError):
                log.warning(
                    "cache file %s is corrupt: its body is not marshal data; rebuilding it", path
                )
    finally:
        if enabled:
            gc.enable()
    if isinstance(state, list):
        return SpellingIndex.from_state(state, rules)
    gc.disable()  # the build makes as many small containers as the load reads
    try:
        index = build()
        body = marshal.dumps(plain_state(index.state()))
    finally:
        if enabled:
            gc.enable()
    atomic_write_bytes(path, pack_bytes(header, body))
    return index


def plain_state(state: list[list[Any]]) -> list[list[Any]]:
    """``state`` as a JSON cache gave it back (lists for tuples, string keys), without the round trip
    through JSON text (a third of the people index's first build).

    Example:
        >>> plain_state([["exact", {"a b": "r1", "c": [("r2", ((1, ","),))]}]])
        [['exact', {'a b': 'r1', 'c': [['r2', [[1, ',']]]]}]]
    """
    return [
        [
            how,
            {
                words: rows
                if type(rows) is str
                else [[ref, [[at, mark] for at, mark in marks]] for ref, marks in rows]
                for words, rows in table.items()
            },
        ]
        for how, table in state
    ]
