"""The film catalog behind MediaSearch: 17,472 films (1940–2014) from Wikidata.

Why a cleaned, cached catalog rather than SQL at run time: every tool call and
every generated question reads the same few fields, so we clean the source
once (split lists, re-join name suffixes, drop empty strings), keep it as
frozen :class:`Title` records with in-memory indexes, and cache the cleaned
form so that later processes load it in a fraction of a second.

Source and cleaning rules: :mod:`agentenv.corpora.media.source` (pinned
sha256, list splitting, "Jr." re-joined, NULL ratings, placeholder dates).
What every user of the catalog must know:

* ``cast`` is alphabetical, not billing order: never read "lead actor" from it.
* ``rating`` is the Rotten Tomatoes critics' average (IMDb ratings are NULL).
* ``released`` is ``None`` when the source only knows the year.
* A *feature film* runs at least :data:`~agentenv.corpora.media.title.FEATURE_MIN_RUNTIME` (60) minutes;
  56 entries run under 60 minutes (16 under 40) and 1,299 have no runtime.

Example:
    >>> normalize_key("  Pedro Armendáriz,  Jr. ")
    'pedro armendariz jr'
    >>> title_key("The Thing") == title_key("thing")
    True
"""

from __future__ import annotations

import logging
import marshal
import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, NamedTuple, overload

from agentenv.corpora.media.files import paused_gc, write_atomic
from agentenv.corpora.media.title import FEATURE_MIN_RUNTIME as FEATURE_MIN_RUNTIME
from agentenv.corpora.media.title import MOVIES_DB_SHA256, Title
from agentenv.storage.checksummed_cache import pack_bytes, unpack_bytes

log = logging.getLogger(__name__)

CACHE_FORMAT = 5
"""Bump when the cleaned layout changes; older cache files are then rebuilt.

4: binary bodies (:mod:`marshal` rows for the titles, a packed table for the
people, :class:`People`) instead of JSON: a warm ``gym.make`` spent most of
its time parsing JSON and building 64k people it never reads.
5: equal strings and tuples are written once (marshal references): 3.5
instead of 6.0 MB, faster to read, and one object per name in memory.
"""

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
    """Index every credited name by :func:`normalize_key` (see :attr:`Catalog.people`).

    A plain dict of every :class:`Person`; :meth:`People.build` makes the same table packed (what a
    cold ``load_catalog`` keeps), without making a Person until one is read.
    """
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


class People(Mapping[str, Person]):
    """:attr:`Catalog.people` as loaded from the cache: a packed table, each :class:`Person` made on first access.

    Why: a process reads a few people of ~64k (a ``find_person`` call, a
    graded person answer), so making them all cost most of the load. The keys
    (in catalog order, as :func:`build_people` gives them), the names and one
    flat ``int32`` array of title positions (directed, wrote, acted per person,
    cut by ``offsets``) are all it holds; a person once made is kept. Read-only.
    """

    def __init__(self, keys: list[str], names: list[str], offsets: Any, positions: Any) -> None:
        self._row = dict(zip(keys, range(len(keys)), strict=True))
        self._names = names
        self._offsets = offsets  # 3 * len(keys) + 1 cut points into positions
        self._positions = positions
        self._made: dict[str, Person] = {}

    def __len__(self) -> int:
        return len(self._row)

    def role_counts(self) -> dict[str, tuple[int, int, int]]:
        """Each key's ``(directed, wrote, acted)`` film counts, read from the cut points (no Person made).

        Why: the question generators pick people by how many films they made, over all ~64k
        of them; making every Person for that took most of a first question build.
        """
        import numpy as np

        counts = np.diff(np.asarray(self._offsets, dtype=np.int64)).reshape(-1, 3).tolist()
        return dict(zip(self._row, map(tuple, counts), strict=True))

    def credit_totals(self) -> dict[str, int]:
        """Each key's number of credits over all three roles, read from the cut points (no Person made)."""
        import numpy as np

        totals = np.diff(np.asarray(self._offsets[::3], dtype=np.int64)).tolist()
        return dict(zip(self._row, totals, strict=True))

    def __iter__(self) -> Iterator[str]:
        return iter(self._row)

    def key_names(self) -> list[tuple[str, str]]:
        """Each ``(key, display name)``, in order, without making a :class:`Person` (see :func:`key_names`)."""
        return list(zip(self._row, self._names, strict=True))

    def __contains__(self, key: object) -> bool:
        return key in self._row

    def __getitem__(self, key: str) -> Person:
        person = self._made.get(key)
        if person is None:
            i = self._row[key]
            cut = self._offsets[3 * i : 3 * i + 4].tolist()
            films = self._positions[cut[0] : cut[3]].tolist()
            a, b, c = cut[1] - cut[0], cut[2] - cut[0], cut[3] - cut[0]
            person = self._made[key] = Person(
                self._names[i], tuple(films[:a]), tuple(films[a:b]), tuple(films[b:c])
            )
        return person

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self._row else default

    def __repr__(self) -> str:
        return f"People({len(self)} people)"

    @classmethod
    def build(cls, titles: Sequence[Title]) -> People:
        """The table :func:`build_people` makes (same keys in the same order, same names, same
        positions), built column-wise: one pass that flattens the credits, then a stable sort.

        Why: the dict of ~64k :class:`Person` records cost about 1 s of a cold first run; the packed
        table is what a warm load gives anyway, and it is written to the cache as it is.
        """
        import numpy as np

        credits = [role for t in titles for role in (t.directors, t.writers, t.cast)]
        flat = [name for role in credits for name in role]
        spellings = dict.fromkeys(flat)  # catalog order of first appearance
        key_of = {name: normalize_key(name) for name in spellings}
        names: dict[str, str] = {}  # key -> its first spelling in catalog order
        for name, key in key_of.items():
            names.setdefault(key, name)
        row_of = dict(zip(names, range(len(names)), strict=True))
        rows = np.fromiter(
            map(row_of.__getitem__, map(key_of.__getitem__, flat)), np.int64, len(flat)
        )
        slots = np.repeat(np.arange(len(credits), dtype=np.int64), [len(r) for r in credits])
        cells = rows * 3 + slots % 3  # (person, role), in catalog order within each cell
        order = np.argsort(cells, kind="stable")
        positions = (slots[order] // 3).astype("<i4")
        offsets = np.zeros(3 * len(names) + 1, dtype=np.int64)
        np.cumsum(np.bincount(cells, minlength=3 * len(names)), out=offsets[1:])
        return cls(list(names), list(names.values()), offsets.astype("<i4"), positions)

    @staticmethod
    def encode(people: Mapping[str, Person]) -> tuple[dict[str, int], bytes]:
        """``(sizes, body)``: the packed table of ``people``; the sizes go in the cache header."""
        import numpy as np

        if isinstance(people, People):  # already packed: written as it is
            return people._encode(
                list(people._row), people._names, people._offsets, people._positions
            )
        keys, names = list(people), [p.name for p in people.values()]
        lengths = [len(role) for p in people.values() for role in (p.directed, p.wrote, p.acted)]
        offsets = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype("<i4")
        positions = np.fromiter(
            (i for p in people.values() for role in (p.directed, p.wrote, p.acted) for i in role),
            dtype="<i4",
            count=int(offsets[-1]),
        )
        return People._encode(keys, names, offsets, positions)

    @staticmethod
    def _encode(
        keys: list[str], names: list[str], offsets: Any, positions: Any
    ) -> tuple[dict[str, int], bytes]:
        if any("\n" in text for text in (*keys, *names)):
            raise RuntimeError(
                "a credited name contains a line break; the people cache cannot hold it"
            )
        text = "\n".join(keys).encode(), "\n".join(names).encode()
        pad = b"\0" * (-(len(text[0]) + len(text[1])) % 4)  # the int32 arrays start 4-byte aligned
        sizes = {"people": len(keys), "keys_bytes": len(text[0]), "names_bytes": len(text[1])}
        return sizes, b"".join(
            [*text, pad, offsets.astype("<i4").tobytes(), positions.astype("<i4").tobytes()]
        )

    @classmethod
    def decode(cls, sizes: Mapping[str, Any], body: bytes) -> People:
        """The table :meth:`encode` wrote (``ValueError`` when ``body`` does not hold it)."""
        import numpy as np

        n, kb, nb = (int(sizes[k]) for k in ("people", "keys_bytes", "names_bytes"))
        keys, names = body[:kb].decode().split("\n"), body[kb : kb + nb].decode().split("\n")
        start = kb + nb + (-(kb + nb) % 4)
        ints = np.frombuffer(body, dtype="<i4", offset=start)
        offsets, positions = ints[: 3 * n + 1], ints[3 * n + 1 :]
        if (
            len(keys) != n
            or len(names) != n
            or len(offsets) != 3 * n + 1
            or int(offsets[-1]) != len(positions)
        ):
            raise ValueError("the people table's sizes do not match its header")
        return cls(keys, names, offsets, positions)


def key_names(people: Mapping[str, Person]) -> list[tuple[str, str]]:
    """Each person's ``(key, display name)``, in order: read from the packed table when ``people`` is a
    :class:`People` (making ~64k Person records only to read their names cost a third of a second).

    Example:
        >>> key_names({"ed wood": Person("Ed Wood", (0,), (), ())})
        [('ed wood', 'Ed Wood')]
    """
    if isinstance(people, People):
        return people.key_names()
    return [(key, person.name) for key, person in people.items()]


class Catalog:
    """All titles, in a fixed order, with look-ups by id, title and person.

    Titles are kept in source order (by ``ID``); ``catalog[i]`` is the i-th.
    Indexes are built on first use, so loading stays fast.
    """

    def __init__(
        self,
        titles: Sequence[Title],
        checksum: str,
        people_loader: Callable[[], Mapping[str, Person] | None] | None = None,
    ) -> None:
        self.titles: tuple[Title, ...] = tuple(titles)
        self.checksum = checksum
        self._people_loader = people_loader
        self.position: dict[str, int] = dict(
            zip([t[0] for t in self.titles], range(len(self.titles)), strict=True)
        )  # t[0] is t.id: a dict comprehension over 17,472 titles was 5 ms of every make

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
    def people(self) -> Mapping[str, Person]:
        """Every credited person under their :func:`normalize_key`.

        Two spellings with one key (e.g. with and without an accent) are one
        person; the display name is the first spelling in catalog order.
        Loaded from the cache on first use when the catalog came from one
        (then a :class:`People`, which makes each person on first access).
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
    from agentenv.storage.paths import cache_dir

    return cache_dir("media", MOVIES_DB_SHA256[:16]) / f"catalog-v{CACHE_FORMAT}.bin"


def people_cache_path() -> Path:
    """Return the cache file of the catalog's people (:class:`People`), next to :func:`cache_path`."""
    return cache_path().with_name(f"people-v{CACHE_FORMAT}.bin")


_FIELDS = Title._fields


def _cache_header() -> dict[str, Any]:
    # The marshal version is part of the key: a Python whose marshal format differs rebuilds instead of misreading.
    return {"format": CACHE_FORMAT, "source_sha256": MOVIES_DB_SHA256, "marshal": marshal.version}


def _to_body(titles: Sequence[Title]) -> bytes:
    """The titles as one :mod:`marshal` list of field tuples: as fast to load as any format tried, and its
    rows need no conversion (JSON turned tuples into lists and needed one split per list field).

    Equal strings and equal tuples of strings become one object (a pool), so marshal writes each once.
    """
    return marshal.dumps(_shared_rows(titles))


def _shared_rows(titles: Sequence[Title]) -> list[tuple[Any, ...]]:
    pool: dict[Any, Any] = {}
    share = pool.setdefault
    rows = []
    for t in titles:
        row = []
        for value in t:
            kind = type(value)
            if kind is str:
                value = share(value, value)
            elif kind is tuple:
                value = tuple([share(v, v) if type(v) is str else v for v in value])
                value = share((tuple, value), value)  # keyed apart from strings and numbers
            row.append(value)
        rows.append(tuple(row))
    return rows


def _from_body(body: bytes) -> list[Title]:
    rows = marshal.loads(body)
    if (
        not isinstance(rows, list)
        or not rows
        or any(type(row) is not tuple or len(row) != len(_FIELDS) for row in rows)
    ):
        raise ValueError("the rows do not match this version's fields")
    return list(map(Title._make, rows))


_LOADED: dict[str, Catalog] = {}


def _warn_malformed(path: Path) -> None:
    """Warn that a cache file passed its checksum but holds the wrong rows; return ``None`` (rebuild)."""
    log.warning("cache file %s is corrupt: its rows do not match this version; rebuilding it", path)
    return None


def _write_people(path: Path, header: Mapping[str, Any], people: Mapping[str, Person]) -> None:
    sizes, body = People.encode(people)
    write_atomic(path, pack_bytes({**header, **sizes}, body))


def _people_loader(
    path: Path, header: dict[str, Any], titles: Sequence[Title]
) -> Callable[[], Mapping[str, Person]]:
    def load() -> Mapping[str, Person]:
        found = unpack_bytes(path, header)
        if found is not None:
            try:
                return People.decode(*found)
            except (KeyError, TypeError, ValueError, UnicodeDecodeError):
                _warn_malformed(path)
        people = People.build(titles)
        _write_people(path, header, people)
        return people

    return load


def _load_cached(path: Path, header: dict[str, Any]) -> Catalog | None:
    found = unpack_bytes(path, header)
    if found is None:
        return None  # missing, or unusable (already reported)
    with paused_gc():
        try:
            titles = _from_body(found[1])
        except (EOFError, TypeError, ValueError):
            return _warn_malformed(path)
    return Catalog(titles, MOVIES_DB_SHA256, _people_loader(people_cache_path(), header, titles))


def load_catalog(*, rebuild: bool = False) -> Catalog:
    """Return the cleaned film catalog, building and caching it on first use.

    The first call in a fresh ``$AGENTENV_HOME`` verifies the sha256 of
    ``movies.db``, cleans it (with a progress bar) and writes the cache
    atomically; later calls read the cache, check its own sha256 and rebuild
    it if it is corrupt. Within a process the catalog is built once and shared.

    Args:
        rebuild: ignore any cache file and build from ``movies.db`` again.
    """
    header = _cache_header()
    path = cache_path()
    key = str(path)
    if not rebuild and key in _LOADED:
        return _LOADED[key]
    catalog = None if rebuild else _load_cached(path, header)
    if catalog is None:
        from agentenv.corpora.media.source import read_titles, verified_db

        with (
            paused_gc()
        ):  # ~10^6 small objects, none cyclic: collection passes were a fifth of the build
            titles = read_titles(verified_db())
            write_atomic(path, pack_bytes(header, _to_body(titles)))
            people = People.build(titles)
            _write_people(people_cache_path(), header, people)
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
