"""Question generators, one per kind, each proving its answer unique.

Every generator draws one candidate with the caller's ``numpy`` Generator and
returns a :class:`Draft`, or ``None`` when the candidate is ambiguous (two
films match, a tie at the top, a film whose name is not unique, a film with
two directors when "the director" is asked...). Ambiguous candidates are
dropped, never repaired, so each answer is the only one the catalog allows.

Uniqueness is checked here with plain Python sets over the catalog's person,
year and genre indexes, not with the numpy index behind ``filter_titles``; the
tests then run every gold plan through the real tools, so the two
implementations check each other.

Difficulty: ``score = constraints + 2 × (hops − 1)``, where *constraints* are
the conditions the answer must meet (film named, actors, genre, year range,
ordering...) and *hops* the entities resolved in sequence; ``easy`` ≤ 2,
``medium`` = 3, ``hard`` ≥ 4. For example, a lookup is (1, 1) → easy, a
comparison (1, 2) → medium, a two-hop (2, 2) → hard.

Example:
    >>> difficulty(1, 1), difficulty(3, 1), difficulty(2, 2)
    ('easy', 'medium', 'hard')
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from agentenv.envs.media_search.questions.context import (
    FAMOUS,
    FAMOUS_DIRECTOR_FILMS,
    KNOWN_ACTOR_FILMS,
    KNOWN_FILM_REVIEWS,
    LEADS,
    SURNAME_SHARE,
    Context,
    Draft,
    difficulty,
)
from agentenv.envs.media_search.questions.kinds_films import comparison, lookup, two_hop
from agentenv.envs.media_search.questions.kinds_groups import constraint, count, superlative

__all__ = [
    "FAMOUS",
    "FAMOUS_DIRECTOR_FILMS",
    "KNOWN_ACTOR_FILMS",
    "KNOWN_FILM_REVIEWS",
    "LEADS",
    "SURNAME_SHARE",
    "Context",
    "Draft",
    "difficulty",
    "GENERATORS",
]


GENERATORS: dict[str, Callable[[Context, np.random.Generator], Draft | None]] = {
    "lookup": lookup,
    "constraint": constraint,
    "superlative": superlative,
    "two_hop": two_hop,
    "comparison": comparison,
    "count": count,
}
"""The question kinds, in a fixed order (the order of generation)."""
