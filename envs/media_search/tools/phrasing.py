"""The words MediaSearch questions are phrased with, as opposed to the words that describe a film.

Why: ``hybrid-minilm``'s MiniLM part reads a question that names a person only
when something else in it describes the film (*the pianist adrien brody*,
*reese witherspoon hiking the pacific crest trail*); a query that is names plus
phrasing (*henry daniell james stewart together*, *2001 alfonso cuaron one*, as
the bm25 agent sends them) would have MiniLM rank films for *together* or *one*
and push the credited film's neighbours out of the hits (the bm25 agent's
accuracy on validation fell 0.937 -> 0.916 with MiniLM reading such leftovers).
:data:`PHRASING_WORDS` are the words found in at least :data:`PHRASING_SHARE` of
the generated train split's questions (:func:`phrasing_words`; a test re-derives
them): question words, genres, decades, common first names and template words.

Example:
    >>> {"together", "one", "director"} <= PHRASING_WORDS
    True
    >>> "pianist" in PHRASING_WORDS
    False
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

PHRASING_SHARE = 0.01
"""A word in at least this share of the generated train questions is phrasing."""

PHRASING_WORDS: frozenset[str] = frozenset(
    """
1985 1990 1994 1995 1999 2000 2000s 2004 2005 2009 2010 2010s 2011 2014 a action and been best
better between both by called came catalog come comedy critics david did direct directed
director drama fantasy feature fi film films first for from has higher horror how i in is it
james john kevin like long longer longest looking made make man many michael minutes more most
movie movies musical name of older one or out paul peter rated released reviews richard robert
runs runtime s sci shortest starring that the title to together tom war was were what when which
who with worst written wrote year
""".split()
)
"""What :func:`phrasing_words` finds in the generated train split (``normalize_key`` words)."""


def phrasing_words(questions: Iterable[str], share: float = PHRASING_SHARE) -> frozenset[str]:
    """The ``normalize_key`` words found in at least ``share`` of ``questions``.

    Example:
        >>> sorted(phrasing_words(["who directed jaws", "who wrote juno", "who directed up"], 0.6))
        ['directed', 'who']
    """
    from agentenv.corpora.media.catalog import normalize_key

    counts: Counter[str] = Counter()
    n = 0
    for question in questions:
        counts.update(set(normalize_key(question).split()))
        n += 1
    return frozenset(w for w, c in counts.items() if c >= share * n)
