"""Spelling indexes from a disk cache, so that no env builds one inside a step.

Why: the film catalog's title and person indexes take about 0.7 s to build
and the disease names 0.1 s; built on the first graded answer, that time
landed inside ``step`` (and in every vector-env worker). Loaded from a
checksummed cache entry under ``$AGENTENV_HOME/spelling`` they take tens of
milliseconds, so an env loads them at ``make``. An entry is keyed by the
source's checksum, :data:`~agentenv.spelling.RULES_VERSION` and the family's
own rules version; a stale or damaged entry is rebuilt (see
:mod:`agentenv.checksummed_cache`).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence

from agentenv.checksummed_cache import unpack, write_pack
from agentenv.paths import cache_dir
from agentenv.spelling import RULES_VERSION, SpellingIndex, WordRule

CACHE_FORMAT = 1


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
    header = {"format": CACHE_FORMAT, "rules": RULES_VERSION, "family": family_version,
              "source_sha256": source_checksum, "name": name}
    path = cache_dir("spelling") / f"{name}.json"
    enabled = gc.isenabled()
    gc.disable()  # tens of thousands of small containers: collection passes would triple the load time
    try:
        state = unpack(path, header)
    finally:
        if enabled:
            gc.enable()
    if state is not None:
        return SpellingIndex.from_state(state, rules)
    index = build()
    write_pack(path, header, index.state())
    return index
