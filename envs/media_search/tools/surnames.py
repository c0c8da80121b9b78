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
from collections.abc import Callable, Iterable
from functools import cache

MIN_FILMS = 10
"""A surname credited on fewer films is too rare to be what a question means by the word."""

MAX_OTHER_SHARE = 0.03
"""The most of the films holding the word that may hold it other than in a credit."""

MIN_LENGTH = 4
"""Shorter surnames (*lee*, *ray*, *kim*) are words or several people too often."""

ARTICLES = frozenset("the a an these those some many all any no few several".split())
"""Words before a plural noun, never before a possessive: *the woods* is no Wood's."""


class SurnameIndex:
    """The films crediting someone of each surname the catalog uses as nothing else."""

    def __init__(
        self,
        films_by_surname: dict[str, frozenset[int]],
        title_words: frozenset[str] = frozenset(),
        best_known: dict[str, str] | None = None,
    ) -> None:
        self._films = films_by_surname
        self._title_words = title_words
        self._best_known = best_known or {}

    def best_known(self, surname: str) -> str | None:
        """The catalog key of the person of ``surname`` credited on the most films: whom the surname alone means.

        Example:
            >>> surname_index().best_known("spielberg")
            'steven spielberg'
        """
        return self._best_known.get(surname)

    def films(self, word: str) -> frozenset[int] | None:
        """The title numbers crediting someone named ``word`` (a normalised word), or ``None`` when it is no surname."""
        return self._films.get(word)

    def names(self) -> list[str]:
        """Every surname of the index."""
        return list(self._films)

    def surnames_said(
        self,
        query: str,
        words: Iterable[str],
        misspelt: Callable[[str], str | None] | None = None,
    ) -> dict[str, str]:
        """Of ``words`` (normalised words of ``query``), each that names a surname, mapped to it.

        A word is its own surname, or a possessive typed without its apostrophe
        (*spielbergs first movie*, *nolans batman movies*: the surname and an *s*)
        unless it follows an article (*in the woods* is no Wood's) or a catalog title holds
        it (*simpsons movie* asks for *The Simpsons Movie*, not a Simpson's), or, where
        ``misspelt`` reads it as one, a surname typed one letter off (*scorcese*;
        :mod:`~agentenv.envs.media_search.tools.misspelt_names`).

        Example:
            >>> surname_index().surnames_said("spielbergs first movie", ["spielbergs", "first"])
            {'spielbergs': 'spielberg'}
            >>> surname_index().surnames_said("lost in the woods", ["lost", "woods"])
            {}
        """
        from agentenv.corpora.media.catalog import normalize_key

        said = normalize_key(query).split()
        after_article = {w for prev, w in zip(said, said[1:], strict=False) if prev in ARTICLES}
        out = {}
        for word in words:
            if word in self._films:
                out[word] = word
            elif (
                word.endswith("s")
                and len(word) > MIN_LENGTH
                and word[:-1] in self._films
                and word not in after_article
                and word not in self._title_words
            ):
                out[word] = word[:-1]
            elif (
                misspelt is not None and word not in after_article and word[:-1] not in self._films
            ):
                meant = misspelt(word)  # not *the warrens*, nor *warrens* as a plural
                if meant is not None:
                    out[word] = meant
        return out


@cache
def surname_index() -> SurnameIndex:
    """The catalog's :class:`SurnameIndex`, built once per process (about a second)."""
    from agentenv.corpora.media.catalog import load_catalog, normalize_key

    credited: defaultdict[str, set[int]] = defaultdict(set)
    per_person: defaultdict[str, int] = defaultdict(int)
    elsewhere: defaultdict[str, set[int]] = defaultdict(set)
    title_words: set[str] = set()
    for n, title in enumerate(load_catalog().titles):
        title_words.update(normalize_key(title.title).split())
        for name in {*title.directors, *title.writers, *title.cast}:
            key = normalize_key(name)
            cut = key.rfind(" ")
            if cut > 0 and len(key) - cut > MIN_LENGTH:
                credited[key[cut + 1 :]].add(n)
                per_person[key] += 1
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
    best: dict[str, tuple[int, str]] = {}
    for key, films in sorted(per_person.items()):
        surname = key[key.rfind(" ") + 1 :]
        if surname in kept and films > best.get(surname, (0, ""))[0]:
            best[surname] = (films, key)
    return SurnameIndex(kept, frozenset(title_words), {s: k for s, (_, k) in best.items()})
