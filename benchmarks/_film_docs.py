"""Film documents and search-box queries for the retrieval benchmark, read straight from movies.db.

Kept apart from ``agentenv.corpora.media.catalog`` so that the benchmark measures the
retrieval back-ends alone, on the same simple documents as the retrieval tests
(title, year, genres, director, cast).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np


def movies_db() -> Path:
    """``movies.db`` inside the installed ``bokeh-sampledata`` wheel."""
    import bokeh_sampledata

    return Path(bokeh_sampledata.__file__).parent / "_data" / "movies.db"


def film_rows() -> list[tuple[str, ...]]:
    """(ID, Title, Year, Genre, Director, Cast) per film, as strings, in ID order."""
    sql = "SELECT ID, Title, Year, Genre, Director, [Cast] FROM omdb ORDER BY ID, Title"
    with sqlite3.connect(f"file:{movies_db()}?mode=ro", uri=True) as con:
        return [tuple("" if v is None else str(v) for v in row) for row in con.execute(sql)]


def film_docs(rows: list[tuple[str, ...]]) -> tuple[list[str], list[str]]:
    """(texts, ids): one short document per film; ids are ``film<ID>``."""
    texts = [f"{t} ({y}). Genres: {g}. Directed by {d}. Cast: {c}." for _, t, y, g, d, c in rows]
    return texts, [f"film{r[0]}" for r in rows]


def film_queries(rows: list[tuple[str, ...]], n: int, seed: int) -> tuple[list[str], list[str]]:
    """``n`` queries (titles, title fragments, people, genre + person) and the film each came from."""
    rng = np.random.default_rng(seed)
    queries, gold = [], []
    while len(queries) < n:
        fid, title, year, genre, director, cast = rows[int(rng.integers(len(rows)))]
        people = [p.strip() for p in f"{director}, {cast}".split(",") if p.strip()] or [title]
        genres = [g.strip() for g in genre.split(",") if g.strip()] or ["film"]
        kind = int(rng.integers(6))
        words = title.split()
        start = int(rng.integers(len(words)))
        queries.append(
            [
                title,
                " ".join(words[start : start + 2]),
                people[int(rng.integers(len(people)))],
                f"{genres[int(rng.integers(len(genres)))]} film with {people[int(rng.integers(len(people)))]}",
                f"{title} {year}",
                f"{genres[0]} from {year} directed by {director}",
            ][kind]
        )
        gold.append(f"film{fid}")
    return queries, gold


def copies(
    tokens: list[list[str]], ids: list[str], scale: int
) -> tuple[list[list[str]], list[str]]:
    """``scale`` copies of a tokenized corpus: a synthetic catalog ``scale`` times larger.

    Copy 0 is the corpus itself (ids unchanged); copy ``c >= 1`` appends the token
    ``copy<c>`` to every document (what tokenizing the text + " copy<c>" gives) and suffixes
    the ids with ``#<c>``, so every copy is a distinct document with its own length and
    every term's document frequency grows ``scale`` times.

    Example:
        >>> copies([["a", "b"]], ["x"], 3)
        ([['a', 'b'], ['a', 'b', 'copy1'], ['a', 'b', 'copy2']], ['x', 'x#1', 'x#2'])
    """
    out_tokens, out_ids = list(tokens), list(ids)
    for c in range(1, scale):
        suffix = f"copy{c}"
        out_tokens.extend([*doc, suffix] for doc in tokens)
        out_ids.extend(f"{i}#{c}" for i in ids)
    return out_tokens, out_ids
