"""The :class:`Title` record (one cleaned film) and the checksum of the file titles are read from.

Its own module so that the catalog (:mod:`.catalog`, which caches and indexes
titles) and the reader of ``movies.db`` (:mod:`.source`, which the catalog calls
on a cache miss) share it without importing each other; :mod:`.catalog`
re-exports all three names.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["FEATURE_MIN_RUNTIME", "MOVIES_DB_SHA256", "Title"]

MOVIES_DB_SHA256 = "1d9c6a02e488d0354b2309e16130c58820a91ac2ce417e814c5964f9579a65ac"
"""sha256 of ``movies.db`` in ``bokeh-sampledata==2026.1``."""

FEATURE_MIN_RUNTIME = 60
"""Minimum runtime in minutes for a *feature film* (the AFI/Academy threshold is
40; 60 keeps TV-length documentaries out of "feature" questions)."""


class Title(NamedTuple):
    """One film, cleaned. All fields are public: tools may show any of them.

    A NamedTuple rather than a frozen dataclass: a warm ``gym.make`` loads all
    17,472 from the cache, and a tuple is made from its cached row in a quarter
    of the time (about 10 ms against 39 ms for the catalog).

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
            for name, value in zip(self._fields, self, strict=True)
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
        parts = [
            f"{self.title} ({self.year}).",
            " ".join([credits[0], ", ".join(credits[1:])]).strip(" ,") + ".",
        ]
        if self.runtime is not None:
            parts.append(f"Runtime {self.runtime} min.")
        if self.languages:
            parts.append(f"Language: {', '.join(self.languages)}.")
        return " ".join(parts)
