"""The film catalog behind MediaSearch: 17,472 films (1940–2014) from Wikidata.

Why a cleaned, cached catalog rather than SQL at run time: every tool call and
every generated question reads the same few fields, so we clean the source
once (split lists, re-join name suffixes, drop empty strings), keep it as
frozen :class:`Title` records with in-memory indexes, and cache the cleaned
form so that later processes load it in a fraction of a second.

Source and cleaning rules: :mod:`agentenv.corpora.media_source` (pinned
sha256, list splitting, "Jr." re-joined, NULL ratings, placeholder dates).
What every user of the catalog must know:

* ``cast`` is alphabetical, not billing order: never read "lead actor" from it.
* ``rating`` is the Rotten Tomatoes critics' average (IMDb ratings are NULL).
* ``released`` is ``None`` when the source only knows the year.
* A *feature film* runs at least :data:`FEATURE_MIN_RUNTIME` (60) minutes;
  56 entries run under 60 minutes (16 under 40) and 1,299 have no runtime.

Example:
    >>> normalize_key("  Pedro Armendáriz,  Jr. ")
    'pedro armendariz jr'
    >>> title_key("The Thing") == title_key("thing")
    True
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, NamedTuple, overload

from agentenv.corpora.media_files import pack, paused_gc, unpack, write_atomic

log = logging.getLogger(__name__)

MOVIES_DB_SHA256 = "1d9c6a02e488d0354b2309e16130c58820a91ac2ce417e814c5964f9579a65ac"
"""sha256 of ``movies.db`` in ``bokeh-sampledata==2026.1``."""

FEATURE_MIN_RUNTIME = 60
"""Minimum runtime in minutes for a *feature film* (the AFI/Academy threshold is
40; 60 keeps TV-length documentaries out of "feature" questions)."""

CACHE_FORMAT = 3
"""Bump when the cleaned layout changes; older cache files are then rebuilt."""

_NON_WORD = re.compile(r"[\W_]+")


@lru_cache(maxsize=1 << 16)
def normalize_key(text: str) -> str:
    """Return a lookup key: lower case, no diacritics, punctuation as spaces.

    Person, genre and title look-ups all go through this key so that
    "Pedro Armendáriz Jr." and "pedro armendariz, jr" find the same person.
    Memoised (a bounded LRU): generating the questions asks for the same
    few thousand names hundreds of thousands of times.

    Example:
        >>> normalize_key("Sci-Fi")
        'sci fi'
        >>> normalize_key("Amélie")
        'amelie'
    """
    text = text.casefold()
    if not text.isascii():
        decomposed = unicodedata.normalize("NFKD", text)
        text = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _NON_WORD.sub(" ", text).strip()


def title_key(title: str) -> str:
    """Return the key under which titles count as "the same name".

    Leading articles are dropped (as the grader drops them), so "The Thing"
    and "Thing" would be one name and a question must then give the year.

    Example:
        >>> title_key("The Dark Knight")
        'dark knight'
    """
    key = normalize_key(title)
    for article in ("the ", "a ", "an "):
        if key.startswith(article) and len(key) > len(article):
            return key[len(article) :]
    return key


@dataclass(frozen=True, slots=True)
class Title:
    """One film, cleaned. All fields are public: tools may show any of them.

    ``rating`` is the critics' average on Rotten Tomatoes (0–10), ``meter``
    the Tomatometer (0–100), ``reviews`` the number of critics' reviews counted
    (a rough measure of how well known a film is), ``box_office`` in US
    dollars; ``None`` means unknown.
    """

    id: str
    title: str
    year: int
    released: str | None
    runtime: int | None
    genres: tuple[str, ...]
    directors: tuple[str, ...]
    writers: tuple[str, ...]
    cast: tuple[str, ...]
    languages: tuple[str, ...]
    countries: tuple[str, ...]
    rating: float | None
    meter: int | None
    reviews: int | None
    box_office: int | None
    oscars_won: int
    awards: str | None
    mpaa_rating: str | None

    @property
    def is_feature(self) -> bool:
        """True when the runtime is known and at least :data:`FEATURE_MIN_RUNTIME`."""
        return self.runtime is not None and self.runtime >= FEATURE_MIN_RUNTIME

    def to_dict(self) -> dict[str, Any]:
        """Return every public field as JSON-ready values (tuples become lists)."""
        return {
            name: list(value) if isinstance(value, tuple) else value
            for name, value in ((f, getattr(self, f)) for f in self.__slots__)
        }

    def document(self) -> str:
        """Return a short description of this film, the text BM25 search indexes.

        Example:
            >>> t = Title("tt1", "Inception", 2010, None, 148, ("Sci-Fi",), ("Christopher Nolan",),
            ...           (), ("Leonardo DiCaprio",), ("English",), (), 8.1, 87, 364, None, 3, None, None)
            >>> t.document()
            'Inception (2010). Sci-Fi film directed by Christopher Nolan, starring Leonardo DiCaprio. Runtime 148 min. Language: English.'
        """
        kind = f"{', '.join(self.genres)} film" if self.genres else "Film"
        credits = [kind]
        if self.directors:
            credits.append(f"directed by {', '.join(self.directors)}")
        if self.writers:
            credits.append(f"written by {', '.join(self.writers)}")
        if self.cast:
            credits.append(f"starring {', '.join(self.cast)}")
        parts = [f"{self.title} ({self.year}).", " ".join([credits[0], ", ".join(credits[1:])]).strip(" ,") + "."]
        if self.runtime is not None:
            parts.append(f"Runtime {self.runtime} min.")
        if self.languages:
            parts.append(f"Language: {', '.join(self.languages)}.")
        return " ".join(parts)


class Person(NamedTuple):
    """One credited name and the catalog positions of its films, per role.

    A NamedTuple rather than a dataclass: the catalog holds ~64k of them and
    tuples are several times cheaper to create when loading from the cache.
    """

    name: str
    directed: tuple[int, ...]
    wrote: tuple[int, ...]
    acted: tuple[int, ...]


def build_people(titles: Sequence[Title]) -> dict[str, Person]:
    """Index every credited name by :func:`normalize_key` (see :attr:`Catalog.people`)."""
    names: dict[str, str] = {}
    roles: dict[str, tuple[list[int], list[int], list[int]]] = {}
    keys: dict[str, str] = {}  # spelling -> key; most names recur, normalise each once
    for i, t in enumerate(titles):
        for r, credited in enumerate((t.directors, t.writers, t.cast)):
            for name in credited:
                key = keys.get(name)
                if key is None:
                    key = keys[name] = normalize_key(name)
                lists = roles.get(key)
                if lists is None:
                    names[key] = name
                    lists = roles[key] = ([], [], [])
                lists[r].append(i)
    return {k: Person(names[k], tuple(d), tuple(w), tuple(a)) for k, (d, w, a) in roles.items()}


class Catalog:
    """All titles, in a fixed order, with look-ups by id, title and person.

    Titles are kept in source order (by ``ID``); ``catalog[i]`` is the i-th.
    Indexes are built on first use, so loading stays fast.
    """

    def __init__(
        self,
        titles: Sequence[Title],
        checksum: str,
        people_loader: Callable[[], dict[str, Person] | None] | None = None,
    ) -> None:
        self.titles: tuple[Title, ...] = tuple(titles)
        self.checksum = checksum
        self._people_loader = people_loader
        self.position: dict[str, int] = {t.id: i for i, t in enumerate(self.titles)}

    def __len__(self) -> int:
        return len(self.titles)

    def __iter__(self) -> Iterator[Title]:
        return iter(self.titles)

    def __getitem__(self, index: int) -> Title:
        return self.titles[index]

    def __repr__(self) -> str:
        return f"Catalog({len(self)} titles, sha256={self.checksum[:12]}…)"

    def get(self, title_id: str) -> Title | None:
        """Return the title with this id, or ``None``."""
        pos = self.position.get(title_id)
        return None if pos is None else self.titles[pos]

    @cached_property
    def by_title(self) -> dict[str, tuple[int, ...]]:
        """Positions of the titles under each :func:`title_key`."""
        index: dict[str, list[int]] = {}
        for i, t in enumerate(self.titles):
            index.setdefault(title_key(t.title), []).append(i)
        return {k: tuple(v) for k, v in index.items()}

    def find_title(self, name: str, year: int | None = None) -> list[Title]:
        """Return the titles named ``name`` (by :func:`title_key`), optionally of one year."""
        found = [self.titles[i] for i in self.by_title.get(title_key(name), ())]
        return [t for t in found if year is None or t.year == year]

    @cached_property
    def people(self) -> dict[str, Person]:
        """Every credited person under their :func:`normalize_key`.

        Two spellings with one key (e.g. with and without an accent) are one
        person; the display name is the first spelling in catalog order.
        Loaded from the cache on first use when the catalog came from one.
        """
        people = self._people_loader() if self._people_loader else None
        return people if people is not None else build_people(self.titles)

    def person(self, name: str) -> Person | None:
        """Return the person credited under exactly this (normalised) name."""
        return self.people.get(normalize_key(name))

    def documents(self) -> tuple[list[str], Sequence[str]]:
        """Return ``(ids, texts)``: one description per title, for search indexes.

        ``texts`` is written on first access: an index served from the disk
        cache needs only the ids and the count.
        """
        return [t.id for t in self.titles], Documents(self.titles)


class Documents(Sequence[str]):
    """The :meth:`Title.document` of each title, written all at once on first access."""

    def __init__(self, titles: Sequence[Title]) -> None:
        self._titles = titles
        self._texts: list[str] | None = None

    @property
    def texts(self) -> list[str]:
        """Every text, in title order."""
        if self._texts is None:
            self._texts = [t.document() for t in self._titles]
        return self._texts

    def __len__(self) -> int:
        return len(self._titles)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        return self.texts[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self.texts)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Documents):
            other = other.texts
        return self.texts == other if isinstance(other, list) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a list-like is not hashable


# --------------------------------------------------------------------------- cache


def cache_path() -> Path:
    """Return the cache file of the cleaned catalog (its folder is shared with the questions)."""
    from agentenv.paths import cache_dir

    return cache_dir("media", MOVIES_DB_SHA256[:16]) / f"catalog-v{CACHE_FORMAT}.json"


_FIELDS = Title.__slots__
_LIST_FIELDS = tuple(i for i, f in enumerate(_FIELDS) if f in
                     ("genres", "directors", "writers", "cast", "languages", "countries"))
_SEP = "|"  # no name, genre, language or country in movies.db contains it (checked on build)


def _to_body(titles: Sequence[Title]) -> list[list[Any]]:
    rows = []
    for t in titles:
        row = [getattr(t, f) for f in _FIELDS]
        for i in _LIST_FIELDS:
            if any(_SEP in item for item in row[i]):
                raise RuntimeError(f"{t.id}: a list item contains {_SEP!r}; the cache format cannot hold it")
            row[i] = _SEP.join(row[i])
        rows.append(row)
    return rows


def _from_body(body: list[list[Any]]) -> list[Title]:
    # Lists are stored joined: one str.split per field is several times faster
    # to load than JSON arrays of strings, which keeps warm loads < 0.3 s.
    empty: tuple[str, ...] = ()
    titles = []
    for row in body:
        for i in _LIST_FIELDS:
            row[i] = tuple(row[i].split(_SEP)) if row[i] else empty
        titles.append(Title(*row))
    return titles


_LOADED: dict[str, Catalog] = {}


def _people_path(path: Path) -> Path:
    return path.with_name(f"people-v{CACHE_FORMAT}.json")


def _warn_malformed(path: Path, body: Any) -> None:
    """Warn that a cache file passed its checksum but holds the wrong rows; return ``None``.

    ``body is None`` is a miss :func:`unpack` already reported (or a first
    build), so it is not reported twice.
    """
    if body is not None:
        log.warning("cache file %s is corrupt: its rows do not match this version; rebuilding it", path)
    return None


def _people_loader(path: Path, header: dict[str, Any], titles: Sequence[Title]) -> Callable[[], dict[str, Person]]:
    def load() -> dict[str, Person]:
        with paused_gc():
            body = unpack(path, header)
            try:
                if isinstance(body, list) and body and all(len(row) == 5 for row in body):
                    return {k: Person(n, tuple(d), tuple(w), tuple(a)) for k, n, d, w, a in body}
            except (TypeError, ValueError):
                pass
            _warn_malformed(path, body)
        people = build_people(titles)
        write_atomic(path, pack(header, [[k, *p] for k, p in people.items()]))
        return people

    return load


def _load_cached(path: Path, header: dict[str, Any]) -> Catalog | None:
    with paused_gc():
        body = unpack(path, header)
        if not isinstance(body, list) or not body or any(not isinstance(row, list) or len(row) != len(_FIELDS) for row in body):
            return _warn_malformed(path, body)
        try:
            titles = _from_body(body)
        except (TypeError, AttributeError, ValueError):
            return _warn_malformed(path, body)
        return Catalog(titles, MOVIES_DB_SHA256, _people_loader(_people_path(path), header, titles))


def load_catalog(*, rebuild: bool = False) -> Catalog:
    """Return the cleaned film catalog, building and caching it on first use.

    The first call in a fresh ``$AGENTENV_HOME`` verifies the sha256 of
    ``movies.db``, cleans it (with a progress bar) and writes the cache
    atomically; later calls read the cache, check its own sha256 and rebuild
    it if it is corrupt. Within a process the catalog is built once and shared.

    Args:
        rebuild: ignore any cache file and build from ``movies.db`` again.
    """
    header = {"format": CACHE_FORMAT, "source_sha256": MOVIES_DB_SHA256}
    path = cache_path()
    key = str(path)
    if not rebuild and key in _LOADED:
        return _LOADED[key]
    catalog = None if rebuild else _load_cached(path, header)
    if catalog is None:
        from agentenv.corpora.media_source import read_titles, verified_db

        titles = read_titles(verified_db())
        write_atomic(path, pack(header, _to_body(titles)))
        people = build_people(titles)
        write_atomic(_people_path(path), pack(header, [[k, *p] for k, p in people.items()]))
        catalog = Catalog(titles, MOVIES_DB_SHA256, lambda: people)
    _LOADED[key] = catalog
    return catalog


def catalog_stats(catalog: Catalog) -> dict[str, Any]:
    """Return the figures the docs quote: counts, coverage and the genre table."""
    genres: dict[str, int] = {}
    for t in catalog:
        for g in t.genres:
            genres[g] = genres.get(g, 0) + 1
    people = catalog.people
    return {
        "titles": len(catalog),
        "years": [min(t.year for t in catalog), max(t.year for t in catalog)],
        "with_runtime": sum(t.runtime is not None for t in catalog),
        "features": sum(t.is_feature for t in catalog),
        "with_rating": sum(t.rating is not None for t in catalog),
        "with_exact_release_date": sum(t.released is not None for t in catalog),
        "with_directors": sum(bool(t.directors) for t in catalog),
        "people": len(people),
        "directors": sum(bool(p.directed) for p in people.values()),
        "writers": sum(bool(p.wrote) for p in people.values()),
        "actors": sum(bool(p.acted) for p in people.values()),
        "names_with_jr_sr_suffix": sum(
            1 for p in people.values() if p.name.endswith((" Jr.", " Sr."))
        ),
        "genres": dict(sorted(genres.items(), key=lambda kv: (-kv[1], kv[0]))),
        "sha256": catalog.checksum,
    }
