"""Structured queries over the film catalog: one semantics for tools and questions.

``filter_titles`` (the agent's tool) and the question generator (which must
prove each answer unique) ask the same kind of question: "which titles meet
these constraints, in which order?". :class:`FilterQuery` is that question;
:class:`CatalogIndex` answers it with precomputed numpy columns (a few hundred
microseconds over 17k titles), and :func:`matches` answers it for one title in
plain Python, as an independent reference.

Matching rules (documented to the agent in the tool schema):

* ``genre``, ``director`` and ``cast`` match whole names after
  :func:`~agentenv.corpora.media.catalog.normalize_key` (case, accents and
  punctuation ignored): "christopher nolan" finds "Christopher Nolan",
  "Nolan" does not. A few genre synonyms are accepted ("science fiction").
* ``cast`` lists names that must *all* appear; year and runtime bounds are
  inclusive; a title with an unknown runtime or rating fails any bound on it.
* ``feature_only`` keeps titles of at least 60 minutes.
* Sorting puts titles with an unknown sort value last in both orders and
  breaks ties by title id, so results are fully deterministic.

Example:
    >>> FilterQuery(year_min=2001, year_max=2000).problems()
    ['year_min (2001) is greater than year_max (2000)']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from agentenv.corpora.media.catalog import FEATURE_MIN_RUNTIME, Catalog, Title, normalize_key

SortKey = Literal["rating", "year", "runtime", "title"]
Order = Literal["desc", "asc"]

GENRE_SYNONYMS = {
    "science fiction": "Sci-Fi",
    "scifi": "Sci-Fi",
    "sf": "Sci-Fi",
    "biopic": "Biography",
    "biographical": "Biography",
    "sports": "Sport",
    "historical": "History",
    "animated": "Animation",
    "romantic": "Romance",
    "romance film": "Romance",
    "documentaries": "Documentary",
    "comedies": "Comedy",
}
"""Extra spellings accepted for a genre (keys already normalised)."""


class QueryError(ValueError):
    """A query the catalog cannot answer as asked; the message says how to fix it."""


@dataclass(frozen=True)
class FilterQuery:
    """The constraints and ordering of one ``filter_titles`` call (all optional)."""

    genre: str | None = None
    year_min: int | None = None
    year_max: int | None = None
    director: str | None = None
    cast: tuple[str, ...] = field(default_factory=tuple)
    runtime_min: int | None = None
    runtime_max: int | None = None
    min_rating: float | None = None
    feature_only: bool = False
    sort_by: SortKey = "rating"
    order: Order = "desc"

    def problems(self) -> list[str]:
        """Return what is inconsistent in the query (empty when it is fine)."""
        out = []
        if (
            self.year_min is not None
            and self.year_max is not None
            and self.year_min > self.year_max
        ):
            out.append(f"year_min ({self.year_min}) is greater than year_max ({self.year_max})")
        if (
            self.runtime_min is not None
            and self.runtime_max is not None
            and self.runtime_min > self.runtime_max
        ):
            out.append(
                f"runtime_min ({self.runtime_min}) is greater than runtime_max ({self.runtime_max})"
            )
        return out


class CatalogIndex:
    """Columns and sort orders over a :class:`Catalog`, built once per process.

    Example (not run: it needs the catalog):
        ``CatalogIndex(load_catalog()).select(FilterQuery(director="Christopher Nolan"), 3)``
    """

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        titles = catalog.titles
        self.size = len(titles)
        self.year = np.fromiter((t.year for t in titles), dtype=np.int32, count=self.size)
        self.runtime = np.array(
            [np.nan if t.runtime is None else t.runtime for t in titles], dtype=np.float64
        )
        self.rating = np.array(
            [np.nan if t.rating is None else t.rating for t in titles], dtype=np.float64
        )
        self.feature = self.runtime >= FEATURE_MIN_RUNTIME  # NaN compares False
        # Rows per genre as spelled, then per normalised key: one key per spelling, not per (title, genre).
        by_spelling: dict[str, list[int]] = {}
        for i, genres in enumerate(t.genres for t in titles):
            for g in genres:
                rows = by_spelling.get(g)
                if rows is None:
                    by_spelling[g] = [i]
                else:
                    rows.append(i)
        self.genres: dict[str, str] = {}  # normalised key -> display name (its first spelling)
        masks: dict[str, np.ndarray] = {}
        for g, rows in by_spelling.items():  # first appearance order
            key = normalize_key(g)
            if key not in masks:
                self.genres[key] = g
                masks[key] = np.zeros(self.size, dtype=bool)
            masks[key][rows] = True
        self._genre_masks = masks
        self._id_rank_array: np.ndarray | None = None
        # Sort orders are worked out on first use (a few ms to 25 ms each, inside the tool's time
        # limit): all eight up front were a sixth of a warm gym.make, and most episodes sort by one.
        self._orders: dict[tuple[str, str], np.ndarray] = {}

    def _id_rank(self) -> np.ndarray:
        """Each row's rank by title id: the last tie-break of every sort order (built with the first one)."""
        if self._id_rank_array is None:
            ids = np.array([t.id for t in self.catalog.titles])
            self._id_rank_array = np.argsort(ids, kind="stable").argsort()
        return self._id_rank_array

    # ------------------------------------------------------------------ resolving names

    def genre_names(self) -> list[str]:
        """Return the catalog's genres, alphabetically, as the tools spell them."""
        return sorted(self.genres.values())

    def resolve_genre(self, genre: str) -> str:
        """Return the catalog spelling of ``genre`` or raise :class:`QueryError`."""
        key = normalize_key(genre)
        if key in self.genres:
            return self.genres[key]
        if key in GENRE_SYNONYMS:
            return GENRE_SYNONYMS[key]
        raise QueryError(
            f"unknown genre {genre[:40]!r}; use one of: {', '.join(self.genre_names())}"
        )

    def person_positions(
        self, name: str, role: Literal["directed", "wrote", "acted"]
    ) -> tuple[int, ...]:
        """Return positions of the titles where ``name`` has ``role``.

        Raises :class:`QueryError` when nobody is credited under that name at
        all, so a misspelling is reported instead of silently matching nothing.
        """
        person = self.catalog.person(name)
        if person is None:
            raise QueryError(
                f"no person credited as {name[:60]!r}; names must match a full credited name "
                "(use find_person to check the spelling)"
            )
        return getattr(person, role)

    # ------------------------------------------------------------------ querying

    def mask(self, q: FilterQuery) -> np.ndarray:
        """Return the boolean mask of titles that satisfy every constraint of ``q``."""
        problems = q.problems()
        if problems:
            raise QueryError("; ".join(problems))
        m = np.ones(self.size, dtype=bool)
        if q.genre is not None:
            m &= self._genre_masks[normalize_key(self.resolve_genre(q.genre))]
        if q.year_min is not None:
            m &= self.year >= q.year_min
        if q.year_max is not None:
            m &= self.year <= q.year_max
        people = [(q.director, "directed")] if q.director is not None else []
        people += [(name, "acted") for name in q.cast]
        for name, role in people:
            pm = np.zeros(self.size, dtype=bool)
            pm[list(self.person_positions(name, role))] = True  # type: ignore[arg-type]
            m &= pm
        if q.runtime_min is not None:
            m &= self.runtime >= q.runtime_min
        if q.runtime_max is not None:
            m &= self.runtime <= q.runtime_max
        if q.min_rating is not None:
            m &= self.rating >= q.min_rating
        if q.feature_only:
            m &= self.feature
        return m

    def order(self, sort_by: SortKey, order: Order) -> np.ndarray:
        """Return all positions sorted by ``sort_by``: unknown values last, ties by id."""
        key = (sort_by, order)
        if key not in self._orders:
            sign = -1.0 if order == "desc" else 1.0
            if sort_by == "title":
                names = np.array([normalize_key(t.title) for t in self.catalog.titles])
                ranks = np.argsort(names, kind="stable").argsort().astype(np.float64)
                value = ranks * sign
                missing = np.zeros(self.size, dtype=bool)
            else:
                column = {
                    "rating": self.rating,
                    "year": self.year.astype(np.float64),
                    "runtime": self.runtime,
                }[sort_by]
                missing = np.isnan(column)
                value = np.where(missing, 0.0, column) * sign
            self._orders[key] = np.lexsort((self._id_rank(), value, missing))
        return self._orders[key]

    def select(self, q: FilterQuery, limit: int) -> tuple[int, list[int]]:
        """Return ``(number of matches, positions of the first `limit` in order)``."""
        m = self.mask(q)
        perm = self.order(q.sort_by, q.order)
        return int(m.sum()), perm[m[perm]][:limit].tolist()


def matches(title: Title, q: FilterQuery, genre: str | None = None) -> bool:
    """Return whether one title satisfies ``q``: the plain-Python reference of :meth:`CatalogIndex.mask`.

    ``genre`` is the resolved catalog spelling of ``q.genre`` (see
    :meth:`CatalogIndex.resolve_genre`); sorting is not considered.

    Example:
        >>> t = Title("tt1", "Inception", 2010, None, 148, ("Sci-Fi",), ("Christopher Nolan",),
        ...           (), ("Leonardo DiCaprio",), (), (), 8.1, 87, 364, None, 3, None, None)
        >>> matches(t, FilterQuery(genre="Sci-Fi", year_min=2010, director="christopher nolan"), "Sci-Fi")
        True
        >>> matches(t, FilterQuery(runtime_max=120))
        False
    """
    if genre is not None and genre not in title.genres:
        return False
    if q.year_min is not None and title.year < q.year_min:
        return False
    if q.year_max is not None and title.year > q.year_max:
        return False
    if q.director is not None and normalize_key(q.director) not in {
        normalize_key(d) for d in title.directors
    }:
        return False
    if q.cast:
        cast = {normalize_key(c) for c in title.cast}
        if any(normalize_key(c) not in cast for c in q.cast):
            return False
    runtime, rating = title.runtime, title.rating
    if q.runtime_min is not None and (runtime is None or runtime < q.runtime_min):
        return False
    if q.runtime_max is not None and (runtime is None or runtime > q.runtime_max):
        return False
    if q.min_rating is not None and (rating is None or rating < q.min_rating):
        return False
    return not (q.feature_only and not title.is_feature)
