"""The fast BM25 index against rank_bm25 on the real film catalog.

Same tokens, same parameters: the top-10 ids must be identical and the
scores equal to 1e-9 (they are in fact equal bit for bit, because the
weights are computed with the same operations in the same order).
"""

from __future__ import annotations

import numpy as np
import pytest

from agentenv.retrieval.bm25 import BM25Retriever
from agentenv.retrieval.reference import RankBM25Retriever

from ._corpus import film_queries, tokenized_film_docs


@pytest.fixture(scope="module")
def pair() -> tuple[BM25Retriever, RankBM25Retriever]:
    tokens, ids = tokenized_film_docs()
    assert len(tokens) == 17_472
    return BM25Retriever.from_tokens(tokens, ids), RankBM25Retriever.from_tokens(tokens, ids)


def assert_same_hits(ours: list, ref: list, context: object) -> None:  # type: ignore[type-arg]
    assert [h.doc_id for h in ours] == [h.doc_id for h in ref], context
    assert [h.rank for h in ours] == [h.rank for h in ref], context
    np.testing.assert_allclose(
        [h.score for h in ours], [h.score for h in ref], rtol=0, atol=1e-9, err_msg=str(context)
    )


def test_top10_parity_on_1000_queries(pair: tuple[BM25Retriever, RankBM25Retriever]) -> None:
    ours, ref = pair
    queries = film_queries(1000, seed=0)
    assert len(set(queries)) > 900
    batch = ours.search_batch(queries, 10)
    full = 0
    for q, in_batch in zip(queries, batch, strict=True):
        expected = ref.search(q, 10)
        assert_same_hits(ours.search(q, 10), expected, q)
        assert_same_hits(in_batch, expected, q)
        full += len(expected) == 10
    assert full > 700  # most queries fill the top 10: the comparison is not vacuous


def test_full_score_vectors_are_identical(pair: tuple[BM25Retriever, RankBM25Retriever]) -> None:
    ours, ref = pair
    for q in film_queries(40, seed=1):
        np.testing.assert_array_equal(ours.scores(q), ref.scores(q))


@pytest.mark.parametrize(
    "params", [{"k1": 1.2, "b": 0.5, "epsilon": 0.5}, {"k1": 2.0, "b": 1.0, "epsilon": 0.0}]
)
def test_parity_with_other_parameters(params: dict) -> None:  # type: ignore[type-arg]
    tokens, ids = tokenized_film_docs()
    ours = BM25Retriever.from_tokens(tokens, ids, **params)
    ref = RankBM25Retriever.from_tokens(tokens, ids, **params)
    for q in film_queries(50, seed=2):
        assert_same_hits(ours.search(q, 10), ref.search(q, 10), (params, q))


@pytest.mark.parametrize("k", [1, 3, 50])
def test_parity_for_other_depths(pair: tuple[BM25Retriever, RankBM25Retriever], k: int) -> None:
    ours, ref = pair
    queries = film_queries(60, seed=3 + k)
    for q, got in zip(queries, ours.search_batch(queries, k), strict=True):
        expected = ref.search(q, k)
        assert_same_hits(got, expected, (k, q))
        assert_same_hits(ours.search(q, k), expected, (k, q))


def test_reference_rejects_what_rank_bm25_lacks() -> None:
    with pytest.raises(ValueError, match="okapi"):
        RankBM25Retriever.from_texts(["a"], idf="lucene")
