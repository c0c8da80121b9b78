"""The film catalog behind MediaSearch: 17,472 films (1940–2014) from Wikidata.

Why a cleaned, cached catalog rather than SQL at run time: every tool call and
every generated question reads the same few fields, so we clean the source
once (split lists, re-join name suffixes, drop empty strings), keep it as
frozen :class:`Title` records with in-memory indexes, and cache the cleaned
form so that later processes load it in a fraction of a second.

Source: PyPI ``bokeh-sampledata==2026.1``, ``bokeh_sampledata/_data/movies.db``
(SQLite, CC0). Its sha256 is pinned in :data:`MOVIES_DB_SHA256`; a different
file is refused rather than silently producing a different benchmark.

Cleaning rules (each fixes a quirk of the source):

* Comma-separated lists become tuples; empty strings become ``()`` or ``None``.
* A list item that is only a name suffix (``Jr.``/``Sr.``, also ``Jr``/``Sr``/
  ``II``/``III``/``IV`` for safety) was split off its name by the comma:
  it is re-joined as ``"Ed Begley Jr."``, the comma-less form the source
  already uses for most such names (``"Robert Downey Jr."``).
* ``cast`` is alphabetical, not billing order: never read "lead actor" from it.
* ``imdbRating`` is always NULL: ``rating`` is the Rotten Tomatoes critics'
  average (0–10) instead.
* ``released`` dates ending in ``-01-01`` are the source's placeholder for
  "year only" (11,468 rows, among them films released mid-year): they become
  ``None``, and ``year`` is the release year.
* A *feature film* runs at least :data:`FEATURE_MIN_RUNTIME` (60) minutes;
  a few entries are shorts (runtime 1–59) and 1,299 have no runtime.

Example:
    >>> normalize_key("  Pedro Armendáriz,  Jr. ")
    'pedro armendariz jr'
    >>> split_names("Ed Begley, Jr., Jodie Foster")
    ('Ed Begley Jr.', 'Jodie Foster')
    >>> split_names("")
    ()
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import re
import sqlite3
import tempfile
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

MOVIES_DB_SHA256 = "1d9c6a02e488d0354b2309e16130c58820a91ac2ce417e814c5964f9579a65ac"
"""sha256 of ``movies.db`` in ``bokeh-sampledata==2026.1``."""

FEATURE_MIN_RUNTIME = 60
"""Minimum runtime in minutes for a *feature film* (the AFI/Academy threshold is
40; 60 keeps TV-length documentaries out of "feature" questions)."""

CACHE_FORMAT = 2
"""Bump when the cleaned layout changes; older cache files are then rebuilt."""

_SUFFIXES = frozenset({"Jr.", "Sr.", "Jr", "Sr", "II", "III", "IV"})
_NON_WORD = re.compile(r"[\W_]+")


def normalize_key(text: str) -> str:
    """Return a lookup key: lower case, no diacritics, punctuation as spaces.

    Person, genre and title look-ups all go through this key so that
    "Pedro Armendáriz Jr." and "pedro armendariz, jr" find the same person.

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


def split_names(value: str | None) -> tuple[str, ...]:
    """Split a comma-separated credit list, re-joining split-off suffixes.

    Duplicates are dropped (first occurrence kept) so a person counts once
    per film and role.
    """
    items: list[str] = []
    for raw in (value or "").split(","):
        item = " ".join(raw.split())
        if not item:
            continue
        if item in _SUFFIXES and items:
            items[-1] = f"{items[-1]} {item}"
        else:
            items.append(item)
    return tuple(dict.fromkeys(items))


def split_list(value: str | None) -> tuple[str, ...]:
    """Split a comma-separated list (genres, languages, countries)."""
    return tuple(dict.fromkeys(x for x in (" ".join(p.split()) for p in (value or "").split(",")) if x))


@dataclass(frozen=True, slots=True)
class Title:
    """One film, cleaned. All fields are public: tools may show any of them.

    ``rating`` is the critics' average on Rotten Tomatoes (0–10), ``meter``
    the Tomatometer (0–100), ``box_office`` in US dollars; ``None`` means unknown.
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
            ...           (), ("Leonardo DiCaprio",), ("English",), (), 8.1, 87, None, 3, None, None)
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


ROLES = ("directed", "wrote", "acted")
"""The three credit roles, in the order tools report them."""


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

    def documents(self) -> tuple[list[str], list[str]]:
        """Return ``(ids, texts)``: one description per title, for search indexes."""
        return [t.id for t in self.titles], [t.document() for t in self.titles]


# --------------------------------------------------------------------------- building


def movies_db_path() -> Path:
    """Return the path of ``movies.db`` inside the installed ``bokeh_sampledata`` wheel."""
    try:
        import bokeh_sampledata
    except ImportError as exc:  # pragma: no cover - it is a hard dependency
        raise RuntimeError(
            "The media catalog needs the PyPI package bokeh-sampledata==2026.1: "
            "pip install 'bokeh-sampledata==2026.1'"
        ) from exc
    return Path(bokeh_sampledata.__file__).parent / "_data" / "movies.db"


def file_sha256(path: Path) -> str:
    """Return the hex sha256 of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _verified_db() -> Path:
    path = movies_db_path()
    if not path.is_file():
        raise RuntimeError(f"{path} is missing: reinstall with pip install --force-reinstall 'bokeh-sampledata==2026.1'")
    found = file_sha256(path)
    if found != MOVIES_DB_SHA256:
        raise RuntimeError(
            f"{path} has sha256 {found}, expected {MOVIES_DB_SHA256} (bokeh-sampledata==2026.1). "
            "A different file would change every question and answer: install exactly "
            "pip install 'bokeh-sampledata==2026.1'."
        )
    return path


_QUERY = """
SELECT o.ID, o.imdbID, o.Title, o.Year, o.Released, o.Runtime, o.Genre, o.Director, o.Writer,
       o.[Cast], o.Language, o.Country, t.Rating, t.Meter, t.BoxOffice, o.Oscars, o.Awards, o.Rating
FROM omdb o LEFT JOIN tomatoes t ON t.ID = o.ID ORDER BY o.ID
"""


def _clean_rows(path: Path) -> list[Title]:
    from tqdm import tqdm

    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        rows = conn.execute(_QUERY).fetchall()
    imdb_counts: dict[str, int] = {}
    for row in rows:
        if row[1]:
            imdb_counts[row[1]] = imdb_counts.get(row[1], 0) + 1
    titles = []
    for (rid, imdb, name, year, released, runtime, genre, director, writer, cast, language,
         country, rating, meter, box_office, oscars, awards, mpaa) in tqdm(
        rows, desc="Building media catalog", unit="film", leave=False
    ):
        tid = imdb if imdb and imdb_counts[imdb] == 1 else f"m{rid}"
        titles.append(Title(
            id=tid,
            title=" ".join(name.split()),
            year=int(year),
            released=None if not released or released.endswith("-01-01") else released,
            runtime=None if runtime is None else int(runtime),
            genres=split_list(genre),
            directors=split_names(director),
            writers=split_names(writer),
            cast=split_names(cast),
            languages=split_list(language),
            countries=split_list(country),
            rating=None if rating is None else float(rating),
            meter=None if meter is None else int(meter),
            box_office=None if box_office is None else int(box_office),
            oscars_won=int(oscars or 0),
            awards=awards or None,
            mpaa_rating=mpaa or None,
        ))
    return titles


# --------------------------------------------------------------------------- cache


def cache_path() -> Path:
    """Return the cache file of the cleaned catalog (its folder is shared with the questions)."""
    from agentenv.paths import cache_dir

    return cache_dir("media", MOVIES_DB_SHA256[:16]) / f"catalog-v{CACHE_FORMAT}.json"


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename.

    Concurrent workers may build the same cache; a rename is atomic, so a
    reader sees either the old complete file or the new complete file.
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def pack(header: dict[str, Any], body: Any) -> bytes:
    """Serialise ``body`` after a one-line header that carries the body's sha256."""
    blob = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    head = dict(header, body_sha256=hashlib.sha256(blob).hexdigest())
    return json.dumps(head, sort_keys=True).encode() + b"\n" + blob


def unpack(path: Path, header: dict[str, Any]) -> Any | None:
    """Return the body of a :func:`pack` file whose header matches, else ``None``.

    ``None`` (missing, truncated, corrupt or stale file) means "rebuild".
    """
    try:
        raw = path.read_bytes()
        head_raw, _, blob = raw.partition(b"\n")
        head = json.loads(head_raw)
        if any(head.get(k) != v for k, v in header.items()):
            return None
        if head.get("body_sha256") != hashlib.sha256(blob).hexdigest():
            return None
        return json.loads(blob)
    except (OSError, ValueError):
        return None


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


def _people_loader(path: Path, header: dict[str, Any], titles: Sequence[Title]) -> Callable[[], dict[str, Person]]:
    def load() -> dict[str, Person]:
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            body = unpack(path, header)
            if isinstance(body, list) and body and all(len(row) == 5 for row in body):
                return {k: Person(n, tuple(d), tuple(w), tuple(a)) for k, n, d, w, a in body}
        except (TypeError, ValueError):
            pass
        finally:
            if was_enabled:
                gc.enable()
        people = build_people(titles)
        write_atomic(path, pack(header, [[k, *p] for k, p in people.items()]))
        return people

    return load


def _load_cached(path: Path, header: dict[str, Any]) -> Catalog | None:
    # The loop allocates ~120k tuples; pausing the cyclic GC (which would scan
    # them repeatedly while they are young) halves the warm load time.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        body = unpack(path, header)
        if not isinstance(body, list) or not body or any(len(row) != len(_FIELDS) for row in body):
            return None
        titles = _from_body(body)
        return Catalog(titles, MOVIES_DB_SHA256, _people_loader(_people_path(path), header, titles))
    except (TypeError, AttributeError, ValueError):
        return None
    finally:
        if was_enabled:
            gc.enable()


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
        titles = _clean_rows(_verified_db())
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
