"""The film catalog as the answer grammar reads it: titles and people by their spelling.

Why a catalog and not the gold's own strings: ``Evil Dead`` (2013) and ``The
Evil Dead`` (1981) are different films, and a grader that only compares an
answer with the gold's spellings cannot know that dropping the article names
another film. So a title answer is resolved to a *film* of the catalog, and
credited only if it is the gold film:

* **exact** tier: the title's words, spelled by :mod:`agentenv.engine.spelling`
  (case, NFKC, hyphen = space, possessive ``'s``; the title's own punctuation
  and accents may be left out, none added);
* **article** tier: the title without a leading ``The``/``A``/``An``, only
  where those words are no other film's title (``Matrix`` is *The Matrix*;
  ``Evil Dead`` is the 2013 film, never the 1981 one);
* ``&`` may be written ``and`` (``Romeo and Juliet`` for ``Romeo & Juliet``,
  unless another film is called ``Romeo and Juliet``: then that film);
* a title that several films share (``Walking Tall``, 1973 and 2004) is
  ambiguous: it needs its year, ``Walking Tall (2004)``, or its id.

People are resolved the same way, over every credited person's name.

Example:
    >>> from types import SimpleNamespace as T
    >>> films = [T(id="tt1", title="The Evil Dead", year=1981), T(id="tt2", title="Evil Dead", year=2013),
    ...          T(id="tt3", title="The Matrix", year=1999)]
    >>> titles = title_index(films)
    >>> [titles.lookup(t).refs for t in ("Evil Dead", "the evil dead", "Matrix")]
    [('tt2',), ('tt1',), ('tt3',)]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any, Protocol

from agentenv.corpora.media.catalog import Catalog, key_names, load_catalog
from agentenv.engine.spelling import Spelling, SpellingIndex, spell_once, without_accents
from agentenv.engine.spelling_cache import cached_spelling_index

ARTICLES = frozenset({"the", "a", "an"})
GOLD_READINGS = 1 << 16
"""At most this many gold readings are kept per catalog (far more than every split's questions)."""
INDEX_VERSION = "media-answers-1"
"""Bump when :func:`title_index` or :func:`person_index` change: cached indexes are then rebuilt."""


class FilmLike(Protocol):
    """What the title index reads of a film."""

    id: str
    title: str
    year: int


def title_index(films: Iterable[FilmLike]) -> SpellingIndex:
    """Titles by spelling, with the article tier limited to titles that collide with no other (see module)."""
    films = list(films)
    spelled = [(f.id, spell_once(f.title)) for f in films]
    taken = {s.words for _, s in spelled}
    taken |= {
        tuple(without_accents(w) for w in s.words)
        for (_, s), f in zip(spelled, films, strict=True)
        if not f.title.isascii()
    }
    shorter = []
    for ref, s in spelled:
        if len(s.words) > 1 and s.words[0] in ARTICLES and s.words[1:] not in taken:
            marks = tuple((max(p - 1, 0), ch) for p, ch in s.marks)
            shorter.append((ref, Spelling(s.words[1:], marks)))
    names = [(f.id, f.title) for f in films]
    names += [(f.id, f.title.replace("&", " and ")) for f in films if "&" in f.title]
    return SpellingIndex(names, extra=(("article", shorter),))


def person_index(names: Iterable[tuple[str, str]]) -> SpellingIndex:
    """People by spelling: ``(person key, display name)`` pairs."""
    return SpellingIndex(names)


class AnswerCatalog:
    """The title and person indexes of one catalog, each built on first use and shared (read-only)."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._titles: SpellingIndex | None = None
        self._people: SpellingIndex | None = None
        self._read_as: dict[str, str] = {}
        self.readings: dict[tuple[str, ...], Any] = {}
        """Answers already read against a question (the grader's memory: see ``grading.read_answer``)."""
        self.gold_readings: dict[tuple[str, ...], Any] = {}
        """What each question's gold names in this catalog (the grader's, read once per question:
        a step then pays only for reading the answer)."""

    def read_as(self, film_id: str) -> str:
        """The feedback of a title answer read as ``film_id``: ``read as the film 'Heat' (1995, tt0113277)``
        (written once per film: a step only looks it up)."""
        read_as = self._read_as.get(film_id)
        if read_as is None:
            film = self.catalog.get(film_id)
            shown = f"the film {film.title!r} ({film.year}, {film_id})" if film else film_id
            read_as = self._read_as[film_id] = f"read as {shown}"
        return read_as

    def remember_gold(self, key: tuple[str, ...], reading: Any) -> None:
        """Keep a gold's reading; bounded (cleared past :data:`GOLD_READINGS`, so that a stream of
        user questions cannot grow it without end)."""
        if len(self.gold_readings) >= GOLD_READINGS:
            self.gold_readings.clear()
        self.gold_readings[key] = reading

    @property
    def titles(self) -> SpellingIndex:
        """The title index (about 0.3 s to build on 2 cores; tens of ms from the disk cache)."""
        if self._titles is None:
            self._titles = cached_spelling_index(
                "media-titles",
                self.catalog.checksum,
                INDEX_VERSION,
                lambda: title_index(self.catalog),
            )
        return self._titles

    @property
    def people(self) -> SpellingIndex:
        """The person index (as :attr:`titles`)."""
        if self._people is None:
            self._people = cached_spelling_index(
                "media-people",
                self.catalog.checksum,
                INDEX_VERSION,
                lambda: person_index(key_names(self.catalog.people)),
            )
        return self._people

    def load(self) -> AnswerCatalog:
        """Load both indexes now (at ``make``), so that no ``step`` pays for them; and the catalog's people,
        which a graded person answer and ``find_person`` read (loaded in the first such step, they cost
        about 150 ms of CPU there, 0.4-0.6 s of wall time on a loaded machine)."""
        _ = self.titles, self.people, self.catalog.people
        return self

    def years(self, film_ids: Sequence[str]) -> dict[str, int]:
        """The release year of each film id."""
        return {fid: film.year for fid in film_ids if (film := self.catalog.get(fid)) is not None}


@lru_cache(maxsize=1)
def answer_catalog() -> AnswerCatalog:
    """The :class:`AnswerCatalog` of the pinned film catalog, one per process."""
    return AnswerCatalog(load_catalog())
