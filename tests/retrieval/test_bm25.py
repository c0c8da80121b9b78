"""BM25Retriever on its own: the formula, the result rules, batches, persistence."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agentenv.retrieval import Retriever
from agentenv.retrieval.bm25 import BM25Retriever, idf_values
from agentenv.retrieval.reference import RankBM25Retriever
from agentenv.retrieval.tokenize import Tokenizer
from agentenv.retrieval.topk import top_k_groups, top_k_rows

from ._corpus import film_queries, tokenized_film_docs

RAW = Tokenizer(stopwords=False, stem="none")
DOCS = [
    "apple pie with apple sauce",
    "the night sky",
    "green apple",
    "a blue sky over the sea",
    "moon and stars",
    "wind",
    "sea",
    "apple sky",
]


def by_hand(
    docs: list[str], query: str, *, k1: float = 1.5, b: float = 0.75, idf: str = "lucene"
) -> np.ndarray:
    """The BM25 formula written out directly, one document at a time."""
    toks = [RAW(d) for d in docs]
    n = len(toks)
    avgdl = sum(map(len, toks)) / n
    out = np.zeros(n)
    for q in RAW(query):
        df = sum(q in t for t in toks)
        if df == 0:
            continue
        w = math.log(1 + (n - df + 0.5) / (df + 0.5)) if idf == "lucene" else None
        for i, t in enumerate(toks):
            tf = t.count(q)
            out[i] += w * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(t) / avgdl))  # type: ignore[operator]
    return out


def test_is_a_retriever() -> None:
    assert isinstance(BM25Retriever.from_texts(DOCS), Retriever)


@pytest.mark.parametrize(
    "query", ["apple", "apple sky", "sea sky moon", "apple apple", "nothing here"]
)
def test_lucene_scores_match_the_formula(query: str) -> None:
    r = BM25Retriever.from_texts(DOCS, idf="lucene", tokenizer=RAW)
    np.testing.assert_allclose(r.scores(query), by_hand(DOCS, query), rtol=1e-12, atol=0)


def test_okapi_idf_floor_for_common_terms() -> None:
    # "x" is in 3 of 4 documents: its raw idf is negative, so it gets epsilon * mean idf.
    idf = idf_values([3, 1, 1], 4, "okapi", 0.25)
    raw = [math.log(4 - n + 0.5) - math.log(n + 0.5) for n in (3, 1, 1)]
    assert raw[0] < 0
    assert idf[0] == pytest.approx(0.25 * sum(raw) / 3)
    assert idf[1:].tolist() == raw[1:]
    with pytest.raises(ValueError, match="unknown idf"):
        idf_values([1], 2, "bm42", 0.25)  # type: ignore[arg-type]


def test_duplicate_query_terms_count_twice() -> None:
    r = BM25Retriever.from_texts(DOCS, tokenizer=RAW)
    np.testing.assert_array_equal(r.scores("apple apple"), 2 * r.scores("apple"))


def test_only_matching_documents_are_returned() -> None:
    r = BM25Retriever.from_texts(DOCS, ids=[f"d{i}" for i in range(len(DOCS))], tokenizer=RAW)
    hits = r.search("moon", k=5)
    assert [h.doc_id for h in hits] == ["d4"]
    assert r.search("unknownword", k=5) == []
    assert r.search("", k=5) == []
    assert r.search("apple", k=0) == []
    assert [h.rank for h in r.search("sky sea", k=10)] == list(
        range(len(r.search("sky sea", k=10)))
    )


def test_ties_go_to_the_lower_row() -> None:
    docs = ["cat dog", "bird", "cat dog", "fish", "cat dog", "cow"]
    r = BM25Retriever.from_texts(docs, tokenizer=RAW)
    assert [h.doc_id for h in r.search("cat", k=2)] == ["0", "2"]
    assert [h.doc_id for h in r.search("cat dog", k=2)] == ["0", "2"]
    assert [h.doc_id for h in r.search_batch(["cat dog", "dog"], k=2)[0]] == ["0", "2"]


def test_ids_and_errors() -> None:
    with pytest.raises(ValueError, match="empty corpus"):
        BM25Retriever.from_texts([])
    with pytest.raises(ValueError, match="ids for"):
        BM25Retriever.from_texts(["a b", "c"], ids=["only-one"])
    r = BM25Retriever.from_texts(["alpha", "beta"])
    assert r.search("beta", 1)[0].doc_id == "1"


def test_top_k_rows_matches_a_full_sort() -> None:
    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(1, 60))
        scores = rng.integers(0, 6, size=n).astype(float)  # many ties
        rows = np.sort(rng.choice(1000, size=n, replace=False))
        k = int(rng.integers(1, 15))
        got_rows, got_scores = top_k_rows(rows, scores, k)
        order = sorted(range(n), key=lambda i: (-scores[i], rows[i]))[:k]
        assert got_rows.tolist() == rows[order].tolist()
        assert got_scores.tolist() == scores[order].tolist()


def test_grouped_top_k_matches_a_full_sort() -> None:
    rng = np.random.default_rng(6)
    for _ in range(100):
        groups, want = [], []
        k = int(rng.integers(1, 8))
        for _ in range(int(rng.integers(0, 5))):
            n = int(rng.integers(0, 30))
            rows = rng.permutation(1000)[:n]
            scores = rng.integers(1, 4, size=n).astype(float)  # many ties
            groups.append((rows, scores))
            order = sorted(range(n), key=lambda i: (-scores[i], rows[i]))[:k]
            want.append((rows[order].tolist(), scores[order].tolist()))
        got = [(r.tolist(), s.tolist()) for r, s in top_k_groups(groups, k)]
        assert got == want


def test_random_small_corpora_agree_with_the_reference() -> None:
    """Tie-heavy toy corpora, including ones whose common terms get a negative idf floor."""
    rng = np.random.default_rng(11)
    vocab = [f"w{i}" for i in range(12)]
    for trial in range(30):
        n = int(rng.integers(2, 40))
        docs = [[str(w) for w in rng.choice(vocab, size=int(rng.integers(1, 8)))] for _ in range(n)]
        ours = BM25Retriever.from_tokens(docs, tokenizer=RAW)
        ref = RankBM25Retriever.from_tokens(docs, tokenizer=RAW)
        k = int(rng.integers(1, 12))
        queries = [
            [str(w) for w in rng.choice(vocab + ["zz"], size=int(rng.integers(1, 5)))]
            for _ in range(10)
        ]
        batch = ours.search_batch([" ".join(q) for q in queries], k)
        for q, in_batch in zip(queries, batch, strict=True):
            a, b = ours.search_tokens(q, k), ref.search_tokens(q, k)
            assert [h.doc_id for h in a] == [h.doc_id for h in b], (trial, q, k)
            np.testing.assert_allclose(
                [h.score for h in a], [h.score for h in b], rtol=0, atol=1e-12
            )
            assert in_batch == a


@pytest.fixture(scope="module")
def film_index() -> BM25Retriever:
    tokens, ids = tokenized_film_docs()
    return BM25Retriever.from_tokens(tokens, ids)


def test_batch_equals_single_exactly(film_index: BM25Retriever) -> None:
    queries = film_queries(1000, seed=21)
    single = [film_index.search(q, 10) for q in queries]
    assert film_index.search_batch(queries, 10) == single
    assert film_index.search_batch(queries[:7], 3) == [s[:3] for s in single[:7]]
    assert film_index.search_batch([], 10) == []


def test_save_load_round_trip(film_index: BM25Retriever, tmp_path) -> None:  # type: ignore[no-untyped-def]
    film_index.save(tmp_path / "idx")
    loaded = BM25Retriever.load(tmp_path / "idx")
    queries = film_queries(200, seed=22)
    assert loaded.search_batch(queries, 10) == film_index.search_batch(queries, 10)
    assert loaded.params == film_index.params
    assert loaded.tokenizer == film_index.tokenizer
    assert 0 < film_index.nbytes() < 64 * 2**20


def test_lucene_agrees_with_bm25s(film_index: BM25Retriever) -> None:
    """bm25s's Lucene variant leaves out the constant (k1 + 1) factor; the rest must agree."""
    bm25s = pytest.importorskip("bm25s")
    tokens, ids = tokenized_film_docs()
    ours = BM25Retriever.from_tokens(tokens, ids, idf="lucene", k1=1.2, b=0.75)
    peer = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    peer.index(tokens, show_progress=False)
    for q in film_queries(50, seed=23):
        toks = ours.tokenizer(q)
        np.testing.assert_allclose(
            ours.scores(q) / 2.2, peer.get_scores(toks), rtol=2e-5, atol=1e-6
        )


def _full_path(index: BM25Retriever, query: str, k: int) -> list[tuple[str, float]]:
    """Top ``k`` from scoring every document (the path every query took before the sparse one)."""
    terms = index._term_ids(index.tokenizer(query))
    if not terms:
        return []
    rows, scores = top_k_groups([index._candidates(terms, k)], k)[0]
    return [(index.ids[r], s) for r, s in zip(rows.tolist(), scores.tolist(), strict=True)]


def test_sparse_path_equals_scoring_every_document() -> None:
    """Mixed dense and sparse terms, repeated terms, ties and the fallback, on corpora with dense rows."""
    rng = np.random.default_rng(12)
    common = ["c0", "c1", "c2"]  # in most documents: they get dense rows
    rare = [f"r{i}" for i in range(40)]
    for trial in range(40):
        n = int(rng.integers(30, 200))
        docs = [
            [
                *rng.choice(common, size=int(rng.integers(1, 4))),
                *rng.choice(rare, size=int(rng.integers(0, 4))),
            ]
            for _ in range(n)
        ]
        index = BM25Retriever.from_tokens(
            [[str(w) for w in d] for d in docs], tokenizer=RAW, idf="lucene"
        )
        assert index._dense_rows, trial
        ref = RankBM25Retriever.from_tokens([[str(w) for w in d] for d in docs], tokenizer=RAW)
        okapi = BM25Retriever.from_tokens([[str(w) for w in d] for d in docs], tokenizer=RAW)
        for _ in range(15):
            q = " ".join(str(w) for w in rng.choice(common + rare, size=int(rng.integers(2, 7))))
            k = int(rng.integers(1, 25))
            got = [(h.doc_id, h.score) for h in index.search(q, k)]
            assert got == _full_path(index, q, k), (trial, q, k)
            assert [h.doc_id for h in okapi.search(q, k)] == [h.doc_id for h in ref.search(q, k)], (
                trial,
                q,
                k,
            )
        assert all(
            not row.any() for row in index._scratch
        )  # the scratch rows are zero between queries


def test_sparse_path_on_the_film_catalog(film_index: BM25Retriever) -> None:
    queries = film_queries(300, seed=24)
    for k in (1, 5, 20):
        for q in queries:
            assert [(h.doc_id, h.score) for h in film_index.search(q, k)] == _full_path(
                film_index, q, k
            ), (q, k)
    assert all(not row.any() for row in film_index._scratch)


def test_a_batch_scored_together_equals_scoring_every_document(film_index: BM25Retriever) -> None:
    """Batches go through one sparse product for their queries without dense terms: same ids, same floats."""
    queries = film_queries(200, seed=26)
    together = [
        q
        for q in queries
        if len(film_index._term_ids(film_index.tokenizer(q))) > 1
        and not any(
            t in film_index._dense_rows for t in film_index._term_ids(film_index.tokenizer(q))
        )
    ]
    assert len(together) > 20  # the product path is taken
    for k in (1, 5, 20):
        got = [[(h.doc_id, h.score) for h in hits] for hits in film_index.search_batch(queries, k)]
        assert got == [_full_path(film_index, q, k) for q in queries], k


def test_a_batch_with_ties_and_repeated_terms_equals_scoring_every_document() -> None:
    rng = np.random.default_rng(13)
    rare = [f"r{i}" for i in range(30)]
    for trial in range(20):
        docs = [
            [str(w) for w in rng.choice(rare, size=int(rng.integers(1, 5)))]
            for _ in range(int(rng.integers(20, 120)))
        ]
        index = BM25Retriever.from_tokens(docs, tokenizer=RAW, idf="lucene")
        queries = [
            " ".join(str(w) for w in rng.choice(rare, size=int(rng.integers(2, 6))))
            for _ in range(12)
        ]
        k = int(rng.integers(1, 15))
        got = [[(h.doc_id, h.score) for h in hits] for hits in index.search_batch(queries, k)]
        assert got == [_full_path(index, q, k) for q in queries], (trial, k)


def test_query_work_counts_the_postings_a_query_reads(film_index: BM25Retriever) -> None:
    common, rare = film_index.query_work("drama"), film_index.query_work("nolan")
    assert common > 100 * rare > 0
    assert film_index.query_work("nolan drama") == common + rare
    assert film_index.query_work("zzzqqq") == 0


def test_pickled_index_searches_alike(film_index: BM25Retriever) -> None:
    import pickle

    copy = pickle.loads(pickle.dumps(film_index))
    assert copy._scratch == []
    queries = film_queries(50, seed=25)
    assert copy.search_batch(queries, 10) == film_index.search_batch(queries, 10)


def test_a_saved_index_keeps_its_weight_order_and_an_older_one_sorts_it_at_load(tmp_path) -> None:
    """The per-term (weight desc, row asc) order is saved with the index; an index saved before
    it was kept (no by_weight.npy) gets the same order computed at load."""
    import numpy as np

    from agentenv.retrieval.bm25 import BM25Retriever

    texts = ["the cat sat", "a cat and a dog", "dogs bark at cats", "the dog sat on the mat"] * 5
    built = BM25Retriever.from_texts(texts, ids=[f"d{i}" for i in range(len(texts))])
    built.save(tmp_path / "new")
    loaded = BM25Retriever.load(tmp_path / "new")
    assert np.array_equal(loaded._by_weight, built._by_weight)
    (tmp_path / "new" / "by_weight.npy").unlink()
    older = BM25Retriever.load(tmp_path / "new")
    assert np.array_equal(older._by_weight, built._by_weight)
    for query in ("cat", "dog sat", "mat bark"):
        assert [h.doc_id for h in older.search(query, 3)] == [
            h.doc_id for h in built.search(query, 3)
        ]


def test_many_candidates_are_cut_by_the_weight_floor_exactly() -> None:
    """Queries whose sparse terms bring hundreds of candidates (as whole questions do on the film
    catalog): the k-th-best-weight floor, then the partition, keep exactly the full path's top k."""
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(60)]
    popularity = np.linspace(0.02, 0.3, len(words))  # many mid-frequency terms, none dense
    n = 1500
    docs = [
        [w for w, p in zip(words, popularity, strict=True) if rng.random() < p] or ["w0"]
        for _ in range(n)
    ]
    index = BM25Retriever.from_tokens(docs, tokenizer=RAW)
    many = 0
    for _ in range(120):
        query = [str(w) for w in rng.choice(words, size=int(rng.integers(2, 9)))]
        terms = index._term_ids(query)
        sparse = [t for t in terms if t not in index._dense_rows]
        many += sum(index._bounds[t + 1] - index._bounds[t] for t in sparse) > 400
        k = int(rng.integers(1, 12))
        got = [(h.doc_id, h.score) for h in index.search(" ".join(query), k)]
        assert got == _full_path(index, " ".join(query), k), (query, k)
    assert many > 60, "the queries must bring more candidates than are sorted outright"


def test_the_weight_order_is_the_three_key_sort(film_index: BM25Retriever) -> None:
    """Each term's postings by (weight desc, row asc): the two-key sort the build uses on postings in
    row order equals sorting by all three keys, on the film catalog and on postings out of row order."""
    index = film_index
    term_of = np.repeat(np.arange(len(index._vocab)), np.diff(index._indptr))
    full = np.lexsort((index._docs, -index._weights, term_of))
    assert np.array_equal(index._by_weight, full)
    ends = index._indptr
    within = (
        ends[term_of] + ends[term_of + 1] - 1 - np.arange(len(term_of))
    )  # each term's rows reversed
    reversed_rows = BM25Retriever(
        index.ids,
        index._vocab,
        index._indptr,
        index._docs[within],
        index._weights[within],
        index.params,
        index.tokenizer,
    )
    expected = np.lexsort((reversed_rows._docs, -reversed_rows._weights, term_of))
    assert np.array_equal(reversed_rows._by_weight, expected)
    assert not np.array_equal(
        reversed_rows._by_weight, np.lexsort((-reversed_rows._weights, term_of))
    )
