"""The four MediaSearch tools on the real catalog: results, validation, error messages."""

from __future__ import annotations

import json

import numpy as np
import pytest
from pydantic import ValidationError

from agentenv.corpora.media.catalog import Catalog, load_catalog
from agentenv.engine.tools import ToolError, ToolRegistry
from agentenv.envs.media_search.tools.film_tools import (
    FilterArgs,
    FindPersonArgs,
    GetTitleArgs,
    MediaTools,
    SearchArgs,
    make_media_tools,
)
from agentenv.envs.media_search.tools.index import CatalogIndex, FilterQuery, matches
from agentenv.envs.media_search.tools.person_index import person_index
from agentenv.retrieval.bm25 import BM25Retriever


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="module")
def tools(catalog) -> MediaTools:
    ids, texts = catalog.documents()
    return MediaTools(catalog, BM25Retriever.from_texts(texts, ids))


def test_search_finds_inception(tools):
    out = tools.search(SearchArgs(query="Inception 2010 Christopher Nolan", k=3))
    top = out["results"][0]
    assert top == {
        "id": "tt1375666",
        "title": "Inception",
        "year": 2010,
        "directors": ["Christopher Nolan"],
        "score": top["score"],
    }
    assert len(out["results"]) == 3


def test_search_with_no_known_word_is_an_error(tools):
    with pytest.raises(ToolError, match="no title matches"):
        tools.search(SearchArgs(query="qqqzzzxxy"))


def test_filter_constraint_query(tools):
    out = tools.filter_titles(
        FilterArgs(
            genre="science fiction",
            year_min=2010,
            year_max=2010,
            director="christopher nolan",
            cast=["Leonardo DiCaprio"],
        )
    )
    assert out == {
        "count": 1,
        "results": [
            {"id": "tt1375666", "title": "Inception", "year": 2010, "runtime": 148, "rating": 8.1}
        ],
    }


def test_filter_sorting_is_total_and_puts_unknown_last(tools):
    out = tools.filter_titles(
        FilterArgs(
            genre="Documentary",
            year_min=1970,
            year_max=1979,
            sort_by="rating",
            order="asc",
            limit=25,
        )
    )
    ratings = [r["rating"] for r in out["results"]]
    assert ratings == sorted(ratings)
    everything = tools.index.select(
        FilterQuery(
            genre="Documentary", year_min=1970, year_max=1979, sort_by="rating", order="asc"
        ),
        10_000,
    )[1]
    values = [tools.catalog[i].rating for i in everything]
    first_unknown = values.index(None)
    assert all(v is None for v in values[first_unknown:])
    known = [
        (v, tools.catalog[i].id) for v, i in zip(values[:first_unknown], everything, strict=False)
    ]
    assert known == sorted(known)  # ties broken by id


@pytest.mark.parametrize("sort_by", ["rating", "year", "runtime", "title"])
def test_filter_orders_agree_with_a_plain_sort(tools, sort_by):
    out = tools.filter_titles(
        FilterArgs(director="Alfred Hitchcock", sort_by=sort_by, order="desc", limit=25)
    )
    assert out["count"] == len(tools.catalog.person("Alfred Hitchcock").directed)
    got = [r["id"] for r in out["results"]]
    films = [tools.catalog.get(i) for i in got]
    if sort_by == "title":
        from agentenv.corpora.media.catalog import normalize_key

        keys = [normalize_key(t.title) for t in films]
    else:
        keys = [getattr(t, sort_by) for t in films if getattr(t, sort_by) is not None]
    assert keys == sorted(keys, reverse=True)


def test_filter_counts_match_a_brute_force_scan(catalog, tools):
    rng = np.random.default_rng(7)
    index = tools.index
    for _ in range(40):
        t = catalog[int(rng.integers(len(catalog)))]
        q = FilterQuery(
            genre=t.genres[0] if t.genres and rng.random() < 0.7 else None,
            year_min=t.year - int(rng.integers(0, 5)),
            year_max=t.year + int(rng.integers(0, 5)),
            cast=tuple(t.cast[:1]) if t.cast and rng.random() < 0.5 else (),
            runtime_max=200 if rng.random() < 0.3 else None,
            min_rating=5.0 if rng.random() < 0.3 else None,
            feature_only=bool(rng.random() < 0.5),
        )
        genre = index.resolve_genre(q.genre) if q.genre else None
        expected = sum(matches(x, q, genre) for x in catalog)
        assert index.select(q, 1)[0] == expected, q


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"year_min": 2001, "year_max": 2000}, "year_min .2001. is greater than year_max"),
        ({"runtime_min": 120, "runtime_max": 90}, "runtime_min .120. is greater than runtime_max"),
        ({"genre": "space opera"}, "unknown genre 'space opera'; use one of: Action"),
        ({"director": "Nolan"}, "no person credited as 'Nolan'.*find_person"),
        ({"cast": ["Leonardo DiCaprio", "Nobody Atall"]}, "no person credited as 'Nobody Atall'"),
    ],
)
def test_filter_explains_bad_queries(tools, args, message):
    with pytest.raises(ToolError, match=message):
        tools.filter_titles(FilterArgs(**args))


@pytest.mark.parametrize(
    ("model", "args"),
    [
        (FilterArgs, {"limit": 26}),
        (FilterArgs, {"sort_by": "popularity"}),
        (FilterArgs, {"colour": "red"}),
        (FilterArgs, {"year_min": 1800}),
        (SearchArgs, {"query": "x", "k": 0}),
        (SearchArgs, {"query": ""}),
        (GetTitleArgs, {}),
    ],
)
def test_argument_models_reject_bad_arguments(model, args):
    with pytest.raises(ValidationError):
        model.model_validate(args)


def test_get_title_returns_every_public_field(tools):
    record = tools.get_title(GetTitleArgs(title_id=" tt1375666 "))
    assert record["directors"] == ["Christopher Nolan"] and record["year"] == 2010
    assert record["released"] == "2010-07-08" and record["is_feature"] is True
    assert set(record) >= {
        "id",
        "title",
        "year",
        "runtime",
        "genres",
        "writers",
        "cast",
        "languages",
        "countries",
        "rating",
        "meter",
        "box_office",
        "oscars_won",
        "awards",
    }
    json.dumps(record)


def test_get_title_unknown_id(tools):
    with pytest.raises(ToolError, match="no title with id 'tt0000000'; ids look like"):
        tools.get_title(GetTitleArgs(title_id="tt0000000"))


def test_find_person_exact_and_partial(tools):
    out = tools.find_person(FindPersonArgs(name="christopher nolan"))
    assert out["match"] == "exact"
    nolan = out["people"][0]
    assert nolan["name"] == "Christopher Nolan"
    assert "tt1375666" in [f["id"] for f in nolan["directed"]]
    assert nolan["totals"]["directed"] == len(nolan["directed"])
    years = [f["year"] for f in nolan["directed"]]
    assert years == sorted(years)
    partial = tools.find_person(FindPersonArgs(name="Nolan"))
    assert partial["match"] == "partial" and "Christopher Nolan" in [
        p["name"] for p in partial["people"]
    ]
    with pytest.raises(ToolError, match="nobody in the catalog is credited as"):
        tools.find_person(FindPersonArgs(name="Zzyzx Qwerty"))


def test_partial_names_match_every_person_whose_name_has_all_the_words(tools, catalog):
    """The name-token index finds exactly the token-subset matches a full scan of the 64k people's
    names gives, in the tool's order (most credits first, then key), for common, rare, repeated and
    absent words (random queries from the catalog's own names)."""
    rng = np.random.default_rng(7)
    keys = list(catalog.people)
    queries = ["de la", "john", "j", "scott ridley", "van der", "zzyzx", "smith smith"]
    for i in rng.choice(len(keys), 12, replace=False):
        words = keys[int(i)].split()
        queries.append(" ".join(rng.choice(words, min(2, len(words)), replace=False)))
    for query in queries:
        wanted = set(query.split())
        expected = sorted(
            (k for k in keys if wanted <= set(k.split())),
            key=lambda k: (-sum(map(len, catalog.people[k][1:])), k),
        )
        assert person_index(catalog).matching(query, limit=len(keys)) == (
            len(expected),
            expected,
        ), query


def test_find_person_output_is_capped(tools):
    for name in ("Samuel L. Jackson", "John", "Michael Caine"):
        out = tools.find_person(FindPersonArgs(name=name))
        assert len(json.dumps(out, ensure_ascii=False)) < 8_000
        for person in out["people"]:
            for role in ("directed", "wrote", "acted"):
                assert len(person[role]) <= 30 and person["totals"][role] >= len(person[role])


def test_registry_runs_the_tools_and_schemas_are_strict(catalog, tools):
    registry = ToolRegistry(make_media_tools(catalog, tools.retriever, tools.index))
    assert registry.names == ["search", "filter_titles", "get_title", "find_person"]
    for schema in registry.schemas:
        params = schema["function"]["parameters"]
        assert params["additionalProperties"] is False
        assert all(p.get("description") for p in params["properties"].values())
    assert "Sci-Fi" in registry["filter_titles"].description
    result = registry.execute(registry["get_title"], GetTitleArgs(title_id="nope"))
    assert not result.ok and result.content.startswith("Error: no title with id")
    result = registry.execute(
        registry["filter_titles"], FilterArgs(director="Christopher Nolan", limit=1)
    )
    assert result.ok and json.loads(result.content)["count"] == len(
        catalog.person("Christopher Nolan").directed
    )


def test_index_can_be_shared(catalog):
    index = CatalogIndex(catalog)
    assert index.genre_names()[0] == "Action" and len(index.genre_names()) == 21


def test_credits_read_from_the_people_equal_a_count_of_every_credit(catalog):
    """``find_person``'s index ranks people by credits read from the catalog's people: they must be
    the credits counted title by title, in the same order, packed table or plain dict alike."""
    from agentenv.envs.media_search.tools.person_index import _credits, credit_counts

    counted = credit_counts(catalog.titles)
    packed = _credits(catalog)
    plain = _credits(Catalog(catalog.titles, catalog.checksum))
    assert list(packed.items()) == list(plain.items()) == list(counted.items())


def test_the_person_index_lists_each_token_s_people_in_rank_order() -> None:
    """The column-wise build against the plain rules: people ranked by credits then key, and each
    token's list the ranks of the keys holding it as a word, once each, ascending."""
    from agentenv.envs.media_search.tools.person_index import PersonIndex

    credits = {"john john": 2, "ridley scott": 3, "tony scott": 5, "scott glenn": 5, "zoë b": 1}
    credits |= {"glenn close": 1, "a b a b": 1, "b": 9}
    order = sorted(credits, key=lambda k: (-credits[k], k))
    index = PersonIndex.build(credits)
    assert index.order == order
    for token in {t for k in credits for t in k.split()}:
        holders = [k for k in order if token in k.split()]
        assert index.matching(token, limit=100) == (len(holders), holders), token
