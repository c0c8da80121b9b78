"""Record the exact observation text of the ``search`` and ``get_title`` tools into a fixture.

    python tests/envs/media_search/record_tool_outputs.py

Run once, before changing how the tools build their output; ``test_tool_outputs.py`` then
checks that every recorded observation is still produced byte for byte. The queries and
title ids are drawn from the catalog with a fixed seed and stored in the fixture, so the
test does not depend on how they were drawn. Besides the stored texts, a sha256 over the
``get_title`` output of every title in the catalog and over a larger query set is kept.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import numpy as np

FIXTURE = Path(__file__).with_name("tool_outputs.json.gz")

SPECIAL_QUERIES = [
    "Inception 2010 Christopher Nolan",
    "the",
    "the of and",
    "qqqzzzxxy",
    "Amélie",
    "AMÉLIE Jean-Pierre Jeunet",
    "Straße",
    "2001",
    "1999 comedy",
    "Star Wars",
    "star wars star wars star",
    "Sci-Fi",
    "documentary",
    "Fünf",
    "Ōkami",
    "日本",
    "  spaced   query  ",
    "x",
    "o'brien",
    "Jr.",
    "Robert Downey, Jr.",
    "a film with lots of words in it that go on and on about nothing at all really",
    "movie movies films film",
    "horror 1980 Carpenter",
    "___",
    "Hitchcock Hitchcock Hitchcock",
    "12 angry men",
]


def queries_and_ids(
    seed: int = 17, n_queries: int = 400, n_hashed: int = 3000, n_titles: int = 300
):
    from agentenv.corpora.media.catalog import load_catalog

    catalog = load_catalog()
    rng = np.random.default_rng(seed)
    titles = catalog.titles

    def draw() -> str:
        t = titles[int(rng.integers(len(titles)))]
        people = [*t.directors, *t.cast, *t.writers] or [t.title]
        words = t.title.split()
        start = int(rng.integers(len(words)))
        genre = t.genres[0] if t.genres else "film"
        return [
            t.title,
            " ".join(words[start : start + 2]),
            people[int(rng.integers(len(people)))],
            f"{genre} film with {people[int(rng.integers(len(people)))]}",
            f"{t.title} {t.year}",
            f"{genre} from {t.year} directed by {t.directors[0] if t.directors else ''}",
            f"{t.year}",
        ][int(rng.integers(7))]

    stored = [(q, k) for q in SPECIAL_QUERIES for k in (1, 5, 20)]
    stored += [(draw(), int(rng.integers(1, 21))) for _ in range(n_queries)]
    hashed = [(draw(), int(rng.integers(1, 21))) for _ in range(n_hashed)]
    ids = [titles[int(i)].id for i in rng.choice(len(titles), n_titles, replace=False)]
    ids += ["tt1375666", " tt1375666 ", "tt0000000", "nope", "m1", "TT1375666", "tt1375666\t"]
    return stored, hashed, ids


def outputs(registry, stored, hashed, ids, all_ids) -> dict:
    from agentenv.envs.media_search.tools.film_tools import GetTitleArgs, SearchArgs

    search, get_title = registry["search"], registry["get_title"]

    def run_search(q: str, k: int) -> list:
        r = registry.execute(search, SearchArgs(query=q, k=k))
        return [r.ok, r.content]

    def run_get(i: str) -> list:
        r = registry.execute(get_title, GetTitleArgs(title_id=i))
        return [r.ok, r.content]

    h_search = hashlib.sha256()
    for q, k in hashed:
        ok, content = run_search(q, k)
        h_search.update(f"{ok}\0{content}\0".encode())
    h_titles = hashlib.sha256()
    for i in all_ids:
        ok, content = run_get(i)
        h_titles.update(f"{ok}\0{content}\0".encode())
    return {
        "search": [[q, k, *run_search(q, k)] for q, k in stored],
        "get_title": [[i, *run_get(i)] for i in ids],
        "hashed_queries": hashed,
        "hashed_search_sha256": h_search.hexdigest(),
        "all_titles_sha256": h_titles.hexdigest(),
    }


def env_registry():
    import gymnasium as gym

    import agentenv  # noqa: F401

    env = gym.make("MediaSearch-v0").unwrapped
    return env, env.tools


def main() -> None:
    env, registry = env_registry()
    stored, hashed, ids = queries_and_ids()
    data = outputs(registry, stored, hashed, ids, [t.id for t in env.catalog.titles])
    text = json.dumps(data, ensure_ascii=False, indent=0).encode()
    FIXTURE.write_bytes(gzip.compress(text, mtime=0))
    print(
        f"wrote {FIXTURE} ({FIXTURE.stat().st_size:,} bytes): {len(data['search'])} searches, "
        f"{len(data['get_title'])} titles, {len(hashed)} hashed queries"
    )


if __name__ == "__main__":
    main()
