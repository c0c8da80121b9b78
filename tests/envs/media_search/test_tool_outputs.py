"""The ``search`` and ``get_title`` observations are the same bytes as when the fixture was recorded.

``tool_outputs.json.gz`` was written by ``record_tool_outputs.py`` before the tools were made
faster (pre-encoded JSON rows, a new BM25 query path): 481 searches and 307 title look-ups
stored verbatim (special queries, errors, accents, k from 1 to 20), a sha256 over 3,000 more
searches, and a sha256 over ``get_title`` for every title in the catalog.
"""

from __future__ import annotations

import gzip
import json

import pytest

from .record_tool_outputs import FIXTURE, env_registry, outputs


@pytest.fixture(scope="module")
def recorded() -> dict:  # type: ignore[type-arg]
    with gzip.open(FIXTURE, "rt", encoding="utf-8") as f:
        return json.load(f)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def current(recorded) -> dict:  # type: ignore[no-untyped-def,type-arg]
    env, registry = env_registry()
    stored = [(q, k) for q, k, _, _ in recorded["search"]]
    ids = [i for i, _, _ in recorded["get_title"]]
    hashed = [(q, k) for q, k in recorded["hashed_queries"]]
    return outputs(registry, stored, hashed, ids, [t.id for t in env.catalog.titles])


def test_search_observations_unchanged(recorded, current) -> None:  # type: ignore[no-untyped-def]
    for want, got in zip(recorded["search"], current["search"], strict=True):
        assert got == want
    assert current["hashed_search_sha256"] == recorded["hashed_search_sha256"]


def test_get_title_observations_unchanged(recorded, current) -> None:  # type: ignore[no-untyped-def]
    for want, got in zip(recorded["get_title"], current["get_title"], strict=True):
        assert got == want
    assert current["all_titles_sha256"] == recorded["all_titles_sha256"]


def test_repeated_calls_are_unchanged(recorded) -> None:  # type: ignore[no-untyped-def]
    """The per-title JSON caches give the same bytes on the second call as on the first."""
    _, registry = env_registry()
    stored = [(q, k) for q, k, _, _ in recorded["search"][:60]]
    ids = [i for i, _, _ in recorded["get_title"][:60]]
    first = outputs(registry, stored, [], ids, [])
    second = outputs(registry, stored, [], ids, [])
    assert first == second
    assert first["search"] == recorded["search"][:60]


def test_text_tools_write_what_the_dict_tools_return() -> None:
    """search_text / get_title_text are the dict bodies as ToolRegistry.execute would encode them."""
    from agentenv.envs.media_search.tools import film_tools as media_tools

    env, registry = env_registry()
    bodies = registry["search"].fn.__self__
    fresh = media_tools.MediaTools(env.catalog, env.retriever, bodies.index)
    encode = json.JSONEncoder(ensure_ascii=False).encode
    for query in [
        "Inception",
        "Amélie Jeunet",
        "drama 1999",
        "Inception",
        "the matrix",
        "Heat",
        "Inception",
    ]:
        for k in (1, 7):
            args = media_tools.SearchArgs(query=query, k=k)
            assert fresh.search_text(args) == encode(fresh.search(args))
    for t in env.catalog.titles[:200]:
        args = media_tools.GetTitleArgs(title_id=t.id)
        assert fresh.get_title_text(args) == encode(fresh.get_title(args))
