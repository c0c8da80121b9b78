"""Film documents and queries for the retrieval tests, straight from the pinned SQLite file.

The proper catalog builder lives in ``agentenv.corpora.media.catalog``; the retrieval
tests only need real text with real term statistics, so they read the file
themselves and stay independent of that module.
"""

from __future__ import annotations

import sqlite3
from functools import lru_cache
from pathlib import Path

import numpy as np


def movies_db() -> Path:
    """Path of ``movies.db`` inside the installed ``bokeh-sampledata`` wheel."""
    import bokeh_sampledata

    return Path(bokeh_sampledata.__file__).parent / "_data" / "movies.db"


@lru_cache(maxsize=1)
def _rows() -> tuple[tuple[str, str, str, str, str, str], ...]:
    sql = (
        "SELECT o.ID, o.Title, o.Year, o.Genre, o.Director, o.[Cast] "
        "FROM omdb o ORDER BY o.ID, o.Title"
    )
    with sqlite3.connect(f"file:{movies_db()}?mode=ro", uri=True) as con:
        return tuple(
            tuple("" if v is None else str(v) for v in row)  # type: ignore[misc]
            for row in con.execute(sql)
        )


def film_docs() -> tuple[list[str], list[str]]:
    """Return (texts, ids): one short document per film, ids are ``"film<ID>"``."""
    texts, ids = [], []
    for fid, title, year, genre, director, cast in _rows():
        texts.append(f"{title} ({year}). Genres: {genre}. Directed by {director}. Cast: {cast}.")
        ids.append(f"film{fid}")
    return texts, ids


def film_queries(n: int, seed: int) -> list[str]:
    """Draw ``n`` search-box queries: titles, title fragments, people, genre + person."""
    rng = np.random.default_rng(seed)
    rows = _rows()
    out: list[str] = []
    while len(out) < n:
        _, title, year, genre, director, cast = rows[int(rng.integers(len(rows)))]
        people = [p.strip() for p in f"{director}, {cast}".split(",") if p.strip()]
        genres = [g.strip() for g in genre.split(",") if g.strip()]
        kind = int(rng.integers(6))
        if kind == 0:
            q = title
        elif kind == 1:
            words = title.split()
            start = int(rng.integers(len(words)))
            q = " ".join(words[start : start + 2])
        elif kind == 2 and people:
            q = people[int(rng.integers(len(people)))]
        elif kind == 3 and people and genres:
            q = f"{genres[int(rng.integers(len(genres)))]} film with {people[int(rng.integers(len(people)))]}"
        elif kind == 4:
            q = f"{title} {year}"
        else:
            q = f"{genres[0] if genres else 'film'} from {year} directed by {director}"
        out.append(q)
    return out


@lru_cache(maxsize=1)
def tokenized_film_docs() -> tuple[list[list[str]], list[str]]:
    """(tokens per document with the default tokenizer, ids); built once per test session."""
    from agentenv.retrieval.tokenize import tokenize

    texts, ids = film_docs()
    return [tokenize(t) for t in texts], ids
