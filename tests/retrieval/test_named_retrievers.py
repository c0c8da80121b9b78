"""Retrievers chosen by one name: the factory, serve-retrieval's --backend, the env's retriever=, errors."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import gymnasium as gym
import numpy as np
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.cli.serve_retrieval import add_parser
from agentenv.engine.actions import tool_call
from agentenv.retrieval import RETRIEVER_NAMES, build_retriever
from agentenv.retrieval.base import Hit
from agentenv.retrieval.encoders import HashedTfidfSvdEncoder

from ._corpus import film_docs


def test_every_name_is_listed_in_one_error() -> None:
    with pytest.raises(ValueError) as err:
        build_retriever("bm-25", ["a b"], ["a"])
    message = str(err.value)
    assert "\n" not in message
    for name in RETRIEVER_NAMES:
        assert name in message


def test_the_old_hybrid_name_says_what_to_use() -> None:
    with pytest.raises(ValueError, match=r"'hybrid-minilm'.*'hybrid-hashed-svd'"):
        build_retriever("hybrid", ["a b"], ["a"])


def test_the_hashed_hybrid_keeps_its_index_under_an_honest_name() -> None:
    texts, ids = film_docs()
    texts, ids = texts[:100], ids[:100]
    small = HashedTfidfSvdEncoder(dim=16, n_features=2**12)
    hybrid = build_retriever("hybrid-hashed-svd", texts, ids, dense={"encoder": small})
    assert type(hybrid).__name__ == "HybridRetriever"
    assert hybrid.search(texts[7].split(" (")[0], 3)[0].doc_id == ids[7]


def _serve_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["serve-retrieval", "--corpus", "media", *argv])


@pytest.mark.parametrize("name", RETRIEVER_NAMES)
def test_serve_retrieval_takes_every_name(name: str) -> None:
    assert _serve_args("--backend", name).backend == name


def test_serve_retrieval_refuses_the_old_name_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        _serve_args("--backend", "hybrid")
    err = capsys.readouterr().err
    assert "use 'hybrid-minilm'" in err and "hybrid-hashed-svd" in err


class Recording:
    """A retriever that answers with one fixed film and records every query."""

    def __init__(self, doc_id: str) -> None:
        self.doc_id = doc_id
        self.queries: list[str] = []

    def search(self, query: str, k: int) -> list[Hit]:
        self.queries.append(query)
        return [Hit(self.doc_id, 1.0, 0)]

    def search_batch(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        return [self.search(q, k) for q in queries]


def test_the_env_and_the_bm25_agent_search_with_the_retriever_the_env_was_made_with() -> None:
    from agentenv.evaluation.agents import make_agent

    env = gym.make("MediaSearch-v0", retriever="bm25")
    doc_id = env.unwrapped.catalog.documents()[0][0]
    recording = Recording(doc_id)
    env = gym.make("MediaSearch-v0", retriever=recording)
    agent = make_agent("bm25")
    searches = 0
    for seed in range(6):
        obs, info = env.reset(seed=seed)
        agent.reset(obs, info, task=env.unwrapped.task, rng=np.random.default_rng(0))
        for _ in range(8):
            action = agent.act(obs, info)
            searches += action.count('"name": "search"')
            obs, _, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                break
    assert searches > 0 and len(recording.queries) == searches


def test_the_env_refuses_the_old_name() -> None:
    with pytest.raises(ValueError, match="hybrid-minilm"):
        gym.make("MediaSearch-v0", retriever="hybrid")
    env = gym.make("MediaSearch-v0", retriever="bm25")
    env.reset(seed=0)
    obs, *_ = env.step(tool_call("search", query="Inception", k=3))
    assert '"results"' in obs


def test_media_search_gives_hybrid_minilm_bm25_the_question_readers_query() -> None:
    from agentenv.envs.media_search.tools.corpus import media_retriever_params
    from agentenv.retrieval.hybrid import HybridRetriever

    bm25, minilm, titles = Recording("tt1"), Recording("tt2"), Recording("tt3")
    params = media_retriever_params("hybrid-minilm")
    params.pop("extra_part")
    hits = HybridRetriever([bm25, minilm, titles], **params).search("who wrote juno?", 5)  # type: ignore[arg-type]
    assert bm25.queries == ["juno"] and minilm.queries == ["who wrote juno?"]
    assert titles.queries == ["who wrote juno?"]  # the third list reads the query as sent
    # each list's first film, fused by MediaSearch's weights: the credited film (1.5) ahead of
    # BM25's and MiniLM's (1.0 each, ties kept in list order)
    assert params["weights"] == (1.0, 1.0, 1.5)
    assert [h.doc_id for h in hits] == ["tt3", "tt1", "tt2"]
    assert media_retriever_params("bm25") == {} == media_retriever_params("dense-minilm")


def test_hybrid_minilms_third_list_keeps_bm25s_films_that_credit_every_named_person() -> None:
    """A film described by two of its actors comes first, though BM25 alone ranks it lower."""
    from agentenv.corpora.media.catalog import load_catalog
    from agentenv.envs.media_search.tools.corpus import CreditedFilms, bm25_search_query

    catalog = load_catalog()
    ids, texts = catalog.documents()
    bm25 = build_retriever("bm25", texts, ids, corpus_checksum=catalog.checksum)
    credits = CreditedFilms(bm25)
    query = "bruce willis and milla jovovich sci fi from 97, who directed it"
    (fifth_element,) = catalog.find_title("The Fifth Element")
    bm25_ids = [h.doc_id for h in bm25.search(bm25_search_query(query), 100)]
    hits = credits.search(query, 10)
    assert hits[0].doc_id == fifth_element.id != bm25_ids[0]  # type: ignore[union-attr]
    assert [h.rank for h in hits] == list(range(len(hits)))
    for h in hits:  # every film credits both, in BM25's order
        people = {*catalog.get(h.doc_id).cast, *catalog.get(h.doc_id).directors}  # type: ignore[union-attr]
        assert {"Bruce Willis", "Milla Jovovich"} <= people
    assert [h.doc_id for h in hits] == [d for d in bm25_ids if d in {h.doc_id for h in hits}]
    assert credits.search("who wrote juno?", 10) == []  # names nobody: left out of the fusion
    assert credits.search("jodie foster and bruce willis", 10) == []  # no film credits both
    assert credits.search_batch([query, "juno"], 3) == [hits[:3], []]


def test_media_search_gives_minilm_the_query_less_its_names_or_nothing() -> None:
    """Films described by their people are BM25's to find: MiniLM reads what else describes the film, if anything."""
    from agentenv.envs.media_search.tools.corpus import media_retriever_params
    from agentenv.retrieval.hybrid import HybridRetriever

    bm25, minilm, titles = Recording("tt1"), Recording("tt2"), Recording("tt3")
    params = media_retriever_params("hybrid-minilm")
    params.pop("extra_part")
    hybrid = HybridRetriever([bm25, minilm, titles], **params)  # type: ignore[arg-type]
    queries = [
        "the 1991 movie with jodie foster",  # names and a year: nothing for MiniLM
        "jodie foster and anthony hopkins were in a movie together",  # names and phrasing
        "who wrote juno?",  # names nobody: the query as sent
        "the pianist adrien brody - director?",  # a title besides the name: MiniLM reads it
    ]
    hits = hybrid.search_batch(queries, 5)
    assert bm25.queries[0] == "1991 jodie foster"
    assert minilm.queries == ["who wrote juno?", "the pianist director"]
    assert [[h.doc_id for h in hs] for hs in hits][:3] == [  # no tt2: MiniLM sat out
        ["tt3", "tt1"],
        ["tt3", "tt1"],
        ["tt3", "tt1", "tt2"],
    ]


def test_serve_retrieval_builds_the_media_corpus_as_the_env_does() -> None:
    from agentenv.envs.media_search.tools.corpus import (
        MEDIA_FUSION_WEIGHTS,
        MEDIA_HYBRID_VERSION,
        CreditedFilms,
        bm25_fused_query,
        minilm_search_query,
    )
    from agentenv.retrieval.corpus_sources import corpus_retriever_params

    assert corpus_retriever_params("media", "hybrid-minilm") == {
        "rewrites": (bm25_fused_query, minilm_search_query, None),
        "extra_part": CreditedFilms,
        "weights": MEDIA_FUSION_WEIGHTS,
        "version": MEDIA_HYBRID_VERSION,
    }
    assert corpus_retriever_params("media", "bm25") == {}
    assert corpus_retriever_params("rare-disease", "hybrid-minilm") == {}
