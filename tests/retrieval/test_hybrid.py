"""Reciprocal-rank fusion on hand-made rankings, and the default BM25 + dense hybrid."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from agentenv.retrieval import Retriever
from agentenv.retrieval.base import Hit
from agentenv.retrieval.encoders import HashedTfidfSvdEncoder
from agentenv.retrieval.hybrid import HybridRetriever, rrf_fuse

from ._corpus import film_docs, film_queries


class Fixed:
    """A retriever that always returns the same ranking (scores are deliberately meaningless)."""

    def __init__(self, ranking: list[str]) -> None:
        self.ranking = ranking
        self.calls: list[int] = []

    def search(self, query: str, k: int) -> list[Hit]:
        return [Hit(d, 1000.0 - i, i) for i, d in enumerate(self.ranking[:k])]

    def search_batch(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        self.calls.append(k)
        return [self.search(q, k) for q in queries]


def test_fused_scores_by_hand() -> None:
    a, b = Fixed(["x", "y", "z"]), Fixed(["z", "x", "w"])
    hits = HybridRetriever([a, b], weights=[2.0, 1.0], rrf_k=10).search("q", 4)
    expected = {
        "x": 2 / 11 + 1 / 12,
        "y": 2 / 12,
        "z": 2 / 13 + 1 / 11,
        "w": 1 / 13,
    }
    assert [h.doc_id for h in hits] == sorted(expected, key=lambda d: -expected[d])
    for h in hits:
        assert h.score == pytest.approx(expected[h.doc_id], rel=1e-12)
    assert [h.rank for h in hits] == [0, 1, 2, 3]


def test_a_rewrite_that_returns_none_keeps_its_part_out_of_that_query() -> None:
    a, b = Fixed(["x", "y"]), Fixed(["z", "x"])
    hybrid = HybridRetriever(
        [a, b], rrf_k=10, rewrites=[None, lambda q: None if q.startswith("skip") else q]
    )
    kept, skipped = hybrid.search_batch(["keep me", "skip me"], 3)
    assert [h.doc_id for h in kept] == ["x", "z", "y"]
    assert [h.doc_id for h in skipped] == ["x", "y"]  # a's ranking alone
    assert len(b.calls) == 1  # b searched the kept query only, in one batch
    assert hybrid.search_batch(["skip all"], 2)[0] == hybrid.search("skip all", 2)
    assert len(b.calls) == 1  # nothing kept: b is not asked


def test_ties_keep_first_met_order() -> None:
    # "p" and "q" both sit at rank 1 of one list: equal scores, "p" is met first.
    hits = rrf_fuse([[Hit("p", 5.0, 0)], [Hit("q", 9.0, 0)]], [1.0, 1.0], 60, 2)
    assert [h.doc_id for h in hits] == ["p", "q"]
    assert hits[0].score == hits[1].score


def test_depth_and_k() -> None:
    a = Fixed([f"d{i}" for i in range(200)])
    h = HybridRetriever([a], depth=50)
    assert len(h.search("q", 10)) == 10
    assert a.calls[-1] == 50  # each part is asked for its top `depth`
    h.search("q", 80)
    assert a.calls[-1] == 80  # ... or more when k is larger
    assert h.search("q", 0) == []


def test_weights_must_match() -> None:
    with pytest.raises(ValueError, match="weights"):
        HybridRetriever([Fixed(["a"])], weights=[1.0, 2.0])
    with pytest.raises(ValueError, match="at least one"):
        HybridRetriever([])


def test_zero_weight_silences_a_retriever() -> None:
    hits = HybridRetriever([Fixed(["a", "b"]), Fixed(["b", "a"])], weights=[1.0, 0.0]).search(
        "q", 2
    )
    assert [h.doc_id for h in hits] == ["a", "b"]


@pytest.fixture(scope="module")
def film_hybrid() -> HybridRetriever:
    texts, ids = film_docs()
    return HybridRetriever.from_texts(
        texts[::8], ids[::8], dense={"encoder": HashedTfidfSvdEncoder(dim=64)}
    )


def test_default_hybrid_on_films(film_hybrid: HybridRetriever) -> None:
    assert isinstance(film_hybrid, Retriever)
    texts, ids = film_docs()
    texts, ids = texts[::8], ids[::8]
    rows = range(0, len(texts), 50)
    queries = [texts[i].split(". Cast")[0] for i in rows]  # title, year, genres, director
    found = [
        ids[i] in {h.doc_id for h in hits}
        for i, hits in zip(rows, film_hybrid.search_batch(queries, 5), strict=True)
    ]
    assert sum(found) >= 0.9 * len(found)
    bm25, dense = film_hybrid.retrievers
    q = "Comedy film with Bill Murray"
    fused = {h.doc_id for h in film_hybrid.search(q, 10)}
    parts = {h.doc_id for h in bm25.search(q, 100)} | {h.doc_id for h in dense.search(q, 100)}
    assert fused <= parts


def test_hybrid_save_load(film_hybrid: HybridRetriever, tmp_path) -> None:  # type: ignore[no-untyped-def]
    film_hybrid.save(tmp_path / "h")
    loaded = HybridRetriever.load(tmp_path / "h")
    queries = film_queries(30, seed=41)
    assert loaded.search_batch(queries, 10) == film_hybrid.search_batch(queries, 10)
