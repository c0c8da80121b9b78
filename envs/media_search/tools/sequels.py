"""A film of a series asked for by its place: *third iron man movie*, *harry potter 3, no wait 4*.

Why: people name a sequel by its number, often not as its title spells it.
BM25 reads *third iron man* as three words and ranked *Iron Man 3* below
rank 20 (its long cast dilutes the title's words); *harry potter 4* names no
word of *Harry Potter and the Goblet of Fire*. The catalog knows each
series' titles and years, so :func:`series_film` reads the series (the words
after an ordinal, or before a sequel number) and its place, and finds the film:
the one whose title carries that number right after the series' words
(*Iron Man 3*, *Rocky IV*, *The Godfather Part II*, *Star Wars: Episode II*), else, for a series of 2 to
:data:`MAX_SERIES` titles that start with those words, the film at that place
by year (*The Bourne Ultimatum* is the third *bourne* film). The last number
said wins, as people correct themselves (*the second bourne movie... no sorry
the third one*). ``hybrid-minilm``'s credited-films list gives that film when
the query names nobody
(:class:`~agentenv.envs.media_search.tools.corpus.CreditedFilms`).

Example:
    >>> from agentenv.corpora.media.catalog import load_catalog
    >>> titles = load_catalog().titles
    >>> titles[series_film("third iron man movie, who directed it")].title
    'Iron Man 3'
    >>> titles[series_film("harry potter 3, no wait 4, the triwizard one")].title
    'Harry Potter and the Goblet of Fire'
    >>> series_film("the one with hit girl, the first not the sequel") is None
    True
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import cache, lru_cache

MAX_SERIES = 9
"""Titles starting with the series' words beyond this many are not one series (*man*, *day*)."""

MAX_SERIES_WORDS = 8
"""The most words beside an ordinal or number read as the series' (*once upon a time in china 2*)."""

ORDINALS = {
    word: n
    for n, words in enumerate(
        (
            (),
            ("first", "1st"),
            ("second", "2nd"),
            ("third", "3rd"),
            ("fourth", "4th"),
            ("fifth", "5th"),
            ("sixth", "6th"),
            ("seventh", "7th"),
            ("eighth", "8th"),
            ("ninth", "9th"),
        )
    )
    for word in words
}
"""An ordinal comes before the series' words (*third iron man*)."""

NUMBERS = {
    **{str(n): n for n in range(1, 10)},
    **{r: n for n, r in enumerate(("", "", "ii", "iii", "iv", "", "vi", "vii", "viii", "ix")) if r},
}
"""A sequel number comes after them (*captain america 2*); *i*, *v* and *x* are words too often."""

STOP_WORDS = frozenset(
    "a about an and at by for from in installment is it movie movies film films flick no not of on "
    "one or part sequel sorry that the this to wait was what when where which who with".split()
)
"""Words that end the series' words: none of them names a series."""

NOT_A_SERIES = frozenset("top best worst greatest last latest favorite favourite".split())
"""One word that starts a few titles but, before a number, counts films (*top 5 movies*)."""

_CLAUSE = re.compile(r"[,;.!?()–—]+|\s+-+\s*|-+\s+")
"""Clause breaks: punctuation and spaced dashes, not a title's colon or hyphen (*mission: impossible
iii*, *spider-man 2*)."""
_WORD = re.compile(r"[a-z0-9]+")


def series_place(query: str) -> tuple[tuple[tuple[str, ...], ...], int] | None:
    """``(series readings, place)`` a query asks for, or ``None``.

    The series is read beside the first ordinal or number that has words beside it:
    the words after an ordinal or before a number, in its clause, up to
    :data:`MAX_SERIES_WORDS`; each reading is a run of them, longest first (the
    series' words are the longest run that starts titles: *how to train your
    dragon*, not *dragon*), with a leading *the* and trailing stop words dropped.
    The place is the last ordinal or number said.

    Example:
        >>> series_place("the second bourne movie... no sorry the third one, runtime")
        ((('bourne',),), 3)
        >>> series_place("captain america 2, the one where bucky is the bad guy")
        ((('captain', 'america'), ('america',)), 2)
        >>> series_place("who directed heat") is None
        True
        >>> series_place("top 5 movies of 1994") is None
        True
        >>> series_place("Mission: Impossible III")[0][0], series_place("spider-man 2 - who directed")[0][0]
        (('mission', 'impossible'), ('spider', 'man'))
    """
    readings: tuple[tuple[str, ...], ...] = ()
    place = None
    for clause in _CLAUSE.split(query.lower()):
        words = _WORD.findall(clause)
        for i, word in enumerate(words):
            if word in ORDINALS:
                place = ORDINALS[word]
                after = _until_a_place(words[i + 1 : i + 1 + MAX_SERIES_WORDS])
                runs = [after[:m] for m in range(len(after), 0, -1)]
            elif word in NUMBERS:
                place = NUMBERS[word]  # *no wait 4* after a comma is a place alone
                before = _until_a_place(words[max(0, i - MAX_SERIES_WORDS) : i][::-1])[::-1]
                runs = [before[j:] for j in range(len(before))]
            else:
                continue
            if not readings:
                readings = _readings(runs)
    if not readings or place is None:
        return None
    return readings, place


def _until_a_place(words: list[str]) -> list[str]:
    """The words up to the next ordinal or number."""
    out = []
    for w in words:
        if w in ORDINALS or w in NUMBERS:
            break
        out.append(w)
    return out


def _readings(runs: list[list[str]]) -> tuple[tuple[str, ...], ...]:
    """Each run less a leading *the* and trailing stop words, once each, in order, unless it names no series."""
    out: list[tuple[str, ...]] = []
    for run in runs:
        words = list(run)
        if words[:1] == ["the"]:
            words = words[1:]
        while words and words[-1] in STOP_WORDS:
            words.pop()
        if not words or words[0] in STOP_WORDS - {"a", "an"} or _not_a_series(tuple(words)):
            continue
        if tuple(words) not in out:
            out.append(tuple(words))
    return tuple(out)


def _not_a_series(words: tuple[str, ...]) -> bool:
    from agentenv.envs.media_search.tools.phrasing import PHRASING_WORDS

    return len(words) == 1 and (words[0] in NOT_A_SERIES or words[0] in PHRASING_WORDS)


@lru_cache(maxsize=4096)
def series_film(query: str) -> int | None:
    """The catalog row of the film the query asks for by its place in a series, or ``None``."""
    asked = series_place(query)
    if asked is None:
        return None
    readings, place = asked
    index = _titles_by_first_word()
    for series in readings:  # the longest reading that starts a title decides
        n = len(series)
        members = [
            (row, title_words[n:])
            for row, title_words in index.get(series[0], ())
            if title_words[:n] == series
        ]
        if members:
            return _place_in(members, place)
    return None


def _place_in(members: list[tuple[int, tuple[str, ...]]], place: int) -> int | None:
    """The member whose title carries ``place`` after the series' words, else the ``place``-th by year.

    By year only where no member's title carries a number: a series that numbers its
    titles (*The Texas Chainsaw Massacre 2*) and has none with this number has no
    film to give.
    """
    from agentenv.corpora.media.catalog import load_catalog

    numbers = {row: _title_number(rest) for row, rest in members}
    for row, _ in members:
        if numbers[row] == place:
            return row
    if len(members) < 2:  # one title is no series (*star trek: first contact*: no first *Contact*)
        return None
    if place == 1:
        for row, rest in members:
            if not rest:  # *the first kick ass*: the title that is the series' words alone
                return row
    if any(numbers.values()) or len(members) > MAX_SERIES or place > len(members):
        return None
    titles = load_catalog().titles
    by_year = sorted(members, key=lambda m: (titles[m[0]].year or 10**4, m[0]))
    return by_year[place - 1][0]


def _title_number(rest: tuple[str, ...]) -> int | None:
    """The sequel number right after the series' words in a title: *3*, *iv*, *part ii*, *episode ii*."""
    number = rest[1:2] if rest[:1] in (("part",), ("chapter",), ("episode",)) else rest[:1]
    return NUMBERS.get(number[0]) if number else None


@cache
def _titles_by_first_word() -> dict[str, list[tuple[int, tuple[str, ...]]]]:
    """Each title's words (less a leading *the*), listed under the first of them."""
    from agentenv.corpora.media.catalog import load_catalog, normalize_key

    index: dict[str, list[tuple[int, tuple[str, ...]]]] = defaultdict(list)
    for row, title in enumerate(load_catalog().titles):
        words = tuple(normalize_key(title.title).split())
        if words[:1] == ("the",):
            words = words[1:]
        if words:
            index[words[0]].append((row, words))
    return dict(index)
