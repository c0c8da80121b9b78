"""A superlative over someone's films: *longest peter jackson movie*, *ridley scott's first film*.

Why: such a question names a person and a sort, and nothing else about the
film. BM25 ranks that person's films by the words they share with the query,
which says nothing about which film is the longest or the first, so the film
asked for sat at ranks 12-31 on the casual validation questions (*The Lord of
the Rings: The Return of the King* for *longest peter jackson movie*). The
catalog knows every film's runtime and release, so ``hybrid-minilm``'s
credited-films list (:class:`~agentenv.envs.media_search.tools.corpus.CreditedFilms`)
orders the films crediting the named people by the sort the question reader
found (:func:`~agentenv.envs.media_search.questions.reading.read_question`'s
``sort``), when the question is that and nothing more: every word of the
reader's query is a named person's, a sort word or phrasing, and the reader
found no year, decade, genre or runtime bound (those narrow the films; BM25
and the fusion read them).
A question about one person means the films of the role they are known for
(:func:`main_credits`): *longest ron howard movie* asks for one he directed,
not *The Music Man* he acted in as a child. A sort by the critics' rating counts only where a word says so (*worst rated
spielberg movie*, *mel brooks best rated movie*): *best* alone is phrasing in
most questions.

Example:
    >>> filmography_sort("longest peter jackson movie", {"peter", "jackson"})
    ('runtime', 'desc')
    >>> filmography_sort("longest peter jackson movie of the 90s", {"peter", "jackson"}) is None
    True
    >>> filmography_sort("last of nolans batman movies", {"nolans"}) is None
    True
    >>> filmography_sort("worst rated spielberg movie", {"spielberg"})
    ('rating', 'asc')
    >>> filmography_sort("spielberg's best movie", {"spielberg"}) is None
    True
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentenv.corpora.media.catalog import Person, Title

SORTED_FIELDS = frozenset({"runtime", "year", "rating"})
"""The sorts a filmography is ordered by; by rating only when :data:`RATING_WORDS` say so."""

RATING_WORDS = frozenset("rated rating ratings reviewed reviews worst lowest highest".split())
"""Words that make a sort one by the critics' rating (*worst rated spielberg movie*); *best* alone
is phrasing in most questions (*best picture*, *best known*)."""

SORT_WORDS = frozenset(
    "longest shortest longer shorter oldest earliest first older earlier newest latest newer later "
    "most recent".split()
)
"""The words that say the sort, beside :data:`~agentenv.envs.media_search.tools.phrasing.PHRASING_WORDS`."""


def filmography_sort(query: str, name_words: Iterable[str]) -> tuple[str, str] | None:
    """``(field, "asc" | "desc")`` when ``query`` asks for the top film of the named people's by runtime, year or rating, else ``None``.

    ``name_words`` are the words of the people the query names (full names and surnames read
    as people), normalised as :func:`~agentenv.corpora.media.catalog.normalize_key` does.
    """
    from agentenv.corpora.media.catalog import normalize_key
    from agentenv.envs.media_search.questions.reading import read_question
    from agentenv.envs.media_search.tools.phrasing import PHRASING_WORDS

    reading = read_question(query)
    if reading.sort is None or reading.sort[0] not in SORTED_FIELDS or reading.options:
        return None
    if reading.years or reading.years_between or reading.genre or reading.runtime_under:
        return None  # a narrower group than the person's films
    if reading.sort[0] == "rating" and not RATING_WORDS & set(normalize_key(query).split()):
        return None
    names = set(name_words)
    words = normalize_key(reading.query).split()
    if not any(w in names for w in words):
        return None
    for word in words:
        if any(c.isdigit() for c in word):
            return None
        if word not in names and word not in SORT_WORDS and word not in PHRASING_WORDS:
            return None
    return reading.sort


def sort_key(field: str, order: str) -> object:
    """A key for ``sorted`` over :class:`Title` records putting the film asked for first; films without the field go last.

    Ties keep the order ``sorted`` was given (the caller passes BM25's).

    Example:
        >>> from types import SimpleNamespace as T
        >>> films = [T(runtime=90, year=2001), T(runtime=None, year=1999), T(runtime=201, year=2003)]
        >>> [f.runtime for f in sorted(films, key=sort_key("runtime", "desc"))]
        [201, 90, None]
        >>> [f.year for f in sorted(films, key=sort_key("year", "asc"))]
        [1999, 2001, 2003]
    """
    sign = -1 if order == "desc" else 1

    def key(title: Title) -> tuple[bool, float]:
        value = getattr(title, field)
        return (value is None, sign * (value or 0))

    return key


DIRECTOR_SHARE = 0.4
"""A person with at least this many films directed per film acted in is read as a director."""

MIN_DIRECTED = 3
"""...and at least this many films directed (one or two make an actor who tried directing)."""


def main_credits(person: Person) -> frozenset[int]:
    """The films of the role ``person`` is known for, their filmography's first rank.

    Why: directing is the rarer credit, so a director is known as one with fewer
    directed films than acted ones (Sofia Coppola: 5 directed, 11 acted in, as a
    child), while an actor who directed one or two (Tom Hanks) is an actor: the
    films directed when there are at least :data:`MIN_DIRECTED` of them and
    :data:`DIRECTOR_SHARE` of the films acted in, else the role with the most films.

    Example:
        >>> from types import SimpleNamespace as P
        >>> sorted(main_credits(P(directed={1, 2, 3}, wrote={1}, acted={4, 5, 6, 7, 8})))
        [1, 2, 3]
        >>> sorted(main_credits(P(directed={1, 2}, wrote=set(), acted={1, 3, 4})))
        [1, 3, 4]
    """
    directed, acted = person.directed, person.acted
    if len(directed) >= MIN_DIRECTED and len(directed) >= DIRECTOR_SHARE * len(acted):
        return frozenset(directed)
    return frozenset(max((directed, person.wrote, acted), key=len))
