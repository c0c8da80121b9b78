"""Reading and cleaning ``movies.db`` (the source of the media catalog).

Source: PyPI ``bokeh-sampledata==2026.1``, ``bokeh_sampledata/_data/movies.db``
(SQLite, CC0, from Wikidata). Its sha256 is pinned in
:data:`~agentenv.corpora.media.title.MOVIES_DB_SHA256`; a different file is refused
rather than silently producing a different benchmark.

Cleaning rules (each fixes a quirk of the source):

* Comma-separated lists become tuples; empty strings become ``()`` or ``None``.
* A list item that is only a name suffix (``Jr.``/``Sr.`` occur; ``Jr``/``Sr``/
  ``II``/``III``/``IV`` are handled too) was split off its name by the comma:
  it is re-joined as ``"Ed Begley Jr."``, the comma-less form the source
  already uses for most such names (``"Robert Downey Jr."``).
* ``imdbRating`` is always NULL: ``rating`` is the Rotten Tomatoes critics'
  average (0–10) instead.
* ``released`` dates ending in ``-01-01`` are the source's placeholder for
  "year only" (11,468 rows, among them films released mid-year): they become
  ``None``; ``year`` is the release year.
* A title id is the IMDb id when present and unique, else ``m<ID>`` (two IMDb
  ids are shared by two rows each, e.g. "Apocalypse Now" and its "Redux").

Example:
    >>> split_names("Ed Begley, Jr., Jodie Foster")
    ('Ed Begley Jr.', 'Jodie Foster')
    >>> split_names("")
    ()
    >>> split_list("Drama, Crime, ")
    ('Drama', 'Crime')
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agentenv.corpora.media.files import file_sha256
from agentenv.corpora.media.title import MOVIES_DB_SHA256, Title

_SUFFIXES = frozenset({"Jr.", "Sr.", "Jr", "Sr", "II", "III", "IV"})


def split_names(value: str | None) -> tuple[str, ...]:
    """Split a comma-separated credit list, re-joining split-off suffixes.

    Duplicates are dropped (first occurrence kept) so a person counts once
    per film and role.
    """
    if not value:
        return ()
    items = [" ".join(raw.split()) for raw in value.split(",")]
    if _SUFFIXES.isdisjoint(items):  # most lists: nothing to re-join
        return tuple(dict.fromkeys(filter(None, items)))
    joined: list[str] = []
    for item in items:
        if not item:
            continue
        if item in _SUFFIXES and joined:
            joined[-1] = f"{joined[-1]} {item}"
        else:
            joined.append(item)
    return tuple(dict.fromkeys(joined))


def split_list(value: str | None) -> tuple[str, ...]:
    """Split a comma-separated list (genres, languages, countries)."""
    return tuple(
        dict.fromkeys(x for x in (" ".join(p.split()) for p in (value or "").split(",")) if x)
    )


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


def verified_db() -> Path:
    """Return the path of ``movies.db`` after checking its sha256 (raises ``RuntimeError`` otherwise)."""
    path = movies_db_path()
    if not path.is_file():
        raise RuntimeError(
            f"{path} is missing: reinstall with pip install --force-reinstall 'bokeh-sampledata==2026.1'"
        )
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
       o.[Cast], o.Language, o.Country, t.Rating, t.Meter, t.Reviews, t.BoxOffice, o.Oscars, o.Awards, o.Rating
FROM omdb o LEFT JOIN tomatoes t ON t.ID = o.ID ORDER BY o.ID
"""


def read_titles(path: Path) -> list[Title]:
    """Read and clean every row of ``movies.db`` (with a progress bar), in ``ID`` order."""
    from tqdm import tqdm

    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        rows = conn.execute(_QUERY).fetchall()
    imdb_counts: dict[str, int] = {}
    for row in rows:
        if row[1]:
            imdb_counts[row[1]] = imdb_counts.get(row[1], 0) + 1
    titles = []
    lists: dict[
        str | None, tuple[str, ...]
    ] = {}  # genres, languages, countries: few distinct values

    def listed(value: str | None) -> tuple[str, ...]:
        found = lists.get(value)
        if found is None:
            found = lists[value] = split_list(value)
        return found

    for (
        rid,
        imdb,
        name,
        year,
        released,
        runtime,
        genre,
        director,
        writer,
        cast,
        language,
        country,
        rating,
        meter,
        reviews,
        box_office,
        oscars,
        awards,
        mpaa,
    ) in tqdm(rows, desc="Building media catalog", unit="film", leave=False):
        tid = imdb if imdb and imdb_counts[imdb] == 1 else f"m{rid}"
        titles.append(
            Title(
                id=tid,
                title=" ".join(name.split()),
                year=int(year),
                released=None if not released or released.endswith("-01-01") else released,
                runtime=None if runtime is None else int(runtime),
                genres=listed(genre),
                directors=split_names(director),
                writers=split_names(writer),
                cast=split_names(cast),
                languages=listed(language),
                countries=listed(country),
                rating=None if rating is None else float(rating),
                meter=None if meter is None else int(meter),
                reviews=None if reviews is None else int(reviews),
                box_office=None if box_office is None else int(box_office),
                oscars_won=int(oscars or 0),
                awards=awards or None,
                mpaa_rating=mpaa or None,
            )
        )
    return titles
