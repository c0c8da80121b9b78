"""Surnames said alone: *bigelow's bin laden film*, *emmerich 2004 disaster movie*.

People name a director or a star by the surname alone, and
:func:`~agentenv.envs.media_search.tools.corpus.named_people` only reads full
names, so ``hybrid-minilm``'s credited-films list was empty for such a query and
BM25 ranked the surname like any other word. A surname is only worth reading
as a person where the catalog uses the word as nothing else: *bigelow* or
*emmerich* are found in no title, genre or language, while *wild*, *black* or
*cash* are (a title word, a colour, money). So a word counts as a surname when
at least :data:`MIN_FILMS` films credit someone whose name ends with it and at
most :data:`MAX_OTHER_SHARE` of the films whose document holds the word hold it
otherwise (in the title, a genre or a language).

Example:
    >>> index = surname_index()
    >>> len(index.films("bigelow")) >= MIN_FILMS
    True
    >>> index.films("wild") is None  # a title word as often as a surname
    True
"""

from __future__ import annotations

from collections import defaultdict
from functools import cache

MIN_FILMS = 10
"""A surname credited on fewer films is too rare to be what a question means by the word."""

MAX_OTHER_SHARE = 0.03
"""The most of the films holding the word that may hold it other than in a credit."""

MIN_LENGTH = 4
"""Shorter surnames (*lee*, *ray*, *kim*) are words or several people too often."""


class SurnameIndex:
    """The films crediting someone of each surname the catalog uses as nothing else."""

    def __init__(self, films_by_surname: dict[str, frozenset[int]]) -> None:
        self._films = films_by_surname

    def films(self, word: str) -> frozenset[int] | None:
        """The title numbers crediting someone named ``word`` (a normalised word), or ``None`` when it is no surname."""
        return self._films.get(word)


@cache
def surname_index() -> SurnameIndex:
    """The catalog's :class:`SurnameIndex`, built once per process (about a second)."""
    from agentenv.corpora.media.catalog import load_catalog, normalize_key

    credited: defaultdict[str, set[int]] = defaultdict(set)
    elsewhere: defaultdict[str, set[int]] = defaultdict(set)
    for n, title in enumerate(load_catalog().titles):
        for name in {*title.directors, *title.writers, *title.cast}:
            key = normalize_key(name)
            cut = key.rfind(" ")
            if cut > 0 and len(key) - cut > MIN_LENGTH:
                credited[key[cut + 1 :]].add(n)
        for text in (title.title, *title.genres, *title.languages):
            for word in normalize_key(text).split():
                elsewhere[word].add(n)
    kept = {}
    for word, films in credited.items():
        if len(films) < MIN_FILMS:
            continue
        other = len(elsewhere.get(word, set()) - films)
        if other <= MAX_OTHER_SHARE * (len(films) + other):
            kept[word] = frozenset(films)
    return SurnameIndex(kept)
