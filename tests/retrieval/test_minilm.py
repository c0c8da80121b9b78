"""The int8 ONNX MiniLM retrievers on a small real corpus (skipped without the ``minilm`` extra).

The full catalog's embeddings are never built here: 200 film documents are enough to check
that the real encoder ranks, caches its queries, fuses with BM25 and survives the disk cache.
"""

from __future__ import annotations

import numpy as np
import pytest

from agentenv.retrieval import HYBRID_MINILM, build_retriever, onnx_minilm
from agentenv.retrieval.hybrid import HybridRetriever
from agentenv.storage.paths import home_at

from ._corpus import film_docs

pytestmark = pytest.mark.skipif(not onnx_minilm.minilm_available(), reason="needs the minilm extra")
N_DOCS = 200


@pytest.fixture(scope="module")
def corpus() -> tuple[list[str], list[str]]:
    texts, ids = film_docs()
    return texts[:N_DOCS], ids[:N_DOCS]


@pytest.fixture(scope="module")
def dense(corpus):  # type: ignore[no-untyped-def]
    texts, ids = corpus
    return build_retriever("dense-minilm", texts, ids)


def test_rows_are_unit_vectors_and_close_meanings_score_higher() -> None:
    enc = onnx_minilm.OnnxMiniLMEncoder()
    x = enc.encode(
        ["a film about a shark attacking a beach town", "killer shark movie", "a courtroom drama"]
    )
    assert x.shape == (3, 384) and x.dtype == np.float32
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-5)
    assert x[0] @ x[1] > x[0] @ x[2] + 0.1


def test_queries_are_cached_per_process_and_the_cache_is_bounded() -> None:
    enc = onnx_minilm.OnnxMiniLMEncoder(query_cache=2)
    first = enc.encode(["who wrote juno?"])
    assert enc._query("who wrote juno?") is enc._query("who wrote juno?")  # served from the cache
    enc.encode(["b", "c"])
    assert list(enc._cache) == ["b", "c"]  # the least recently used went first
    assert np.array_equal(enc.encode(["who wrote juno?"]), first)  # recomputed, same vector


def test_a_repeated_query_skips_the_graph_search_and_gets_the_same_hits(corpus) -> None:  # type: ignore[no-untyped-def]
    texts, ids = corpus
    dense = build_retriever(
        "dense-minilm", texts[:80], ids[:80], encoder=onnx_minilm.OnnxMiniLMEncoder(query_cache=2)
    )
    queries = ["war film", "who wrote juno?", texts[3]]
    fresh = dense.search_batch(queries, 20)
    asked = []
    real_search = dense.index.search
    dense.index.search = lambda q, k: asked.append(len(q)) or real_search(q, k)  # type: ignore[method-assign]
    assert dense.search_batch(queries[1:], 20) == fresh[1:]  # the last two are cached
    assert dense.search(queries[0], 20) == fresh[0]  # evicted (2 queries kept): faiss again
    assert asked == [1]
    assert list(dense._results) == [(texts[3], 20), ("war film", 20)]
    assert dense.search("war film", 5) == fresh[0][:5]  # another k is another entry
    dense.clear_query_cache(keep_embeddings=True)
    assert not dense._results and len(dense.encoder._cache) == 2
    assert dense.search_batch(queries, 20) == fresh
    dense.clear_query_cache()
    assert not dense._results and not dense.encoder._cache


def test_documents_are_cut_but_queries_are_not() -> None:
    enc = onnx_minilm.OnnxMiniLMEncoder(max_doc_tokens=8)
    long = "Casablanca (1942). Drama, Romance film directed by Michael Curtiz, starring Humphrey Bogart."
    tok = enc._load_tokenizer()
    cut = tok.decode(tok.encode(long).ids[1:7])  # [CLS], 6 tokens and [SEP] make 8
    assert tok.encode(cut).ids[1:-1] == tok.encode(long).ids[1:7]
    # One document alone: int8 activations are scaled per batch, so batch-mates move a row a little.
    assert np.allclose(enc.encode_documents([long])[0], enc.encode([cut])[0], atol=1e-5)
    assert not np.allclose(enc.encode([long])[0], enc.encode([cut])[0], atol=1e-3)


def test_dense_minilm_finds_films_by_their_titles(dense, corpus) -> None:  # type: ignore[no-untyped-def]
    texts, ids = corpus
    titles = [t.split(" (")[0] for t in texts[:60]]
    found = [ids[i] in {h.doc_id for h in dense.search(q, 3)} for i, q in enumerate(titles)]
    assert np.mean(found) >= 0.8, np.mean(found)


def test_hybrid_minilm_fuses_bm25_and_minilm(corpus) -> None:  # type: ignore[no-untyped-def]
    texts, ids = corpus[0][:60], corpus[1][:60]
    hybrid = build_retriever("hybrid-minilm", texts, ids)
    assert isinstance(hybrid, HybridRetriever)
    assert [type(r).__name__ for r in hybrid.retrievers] == ["BM25Retriever", "DenseRetriever"]
    director = texts[5].split("Directed by ")[1].split(".")[0]
    hits = hybrid.search(f"the movie {director} directed", 10)
    assert ids[5] in {h.doc_id for h in hits}
    assert hybrid.search_batch(["a", "b"], 5) == [hybrid.search("a", 5), hybrid.search("b", 5)]
    assert hybrid.weights == list(HYBRID_MINILM["weights"][:2])  # type: ignore[index]


def test_hybrid_minilm_fuses_a_third_list_where_the_corpus_gives_one(corpus) -> None:  # type: ignore[no-untyped-def]
    from agentenv.retrieval.base import Hit

    texts, ids = corpus[0][:60], corpus[1][:60]
    given = []

    class Last:  # the corpus's own list: built over the BM25 part, answers with one film
        def __init__(self, bm25: object) -> None:
            given.append(bm25)

        def search(self, query: str, k: int) -> list[Hit]:
            return [Hit(ids[59], 1.0, 0)]

        def search_batch(self, queries: list[str], k: int) -> list[list[Hit]]:
            return [self.search(q, k) for q in queries]

    hybrid = build_retriever("hybrid-minilm", texts, ids, extra_part=Last)
    assert isinstance(hybrid, HybridRetriever)
    assert [type(r).__name__ for r in hybrid.retrievers] == [
        "BM25Retriever",
        "DenseRetriever",
        "Last",
    ]
    assert given == hybrid.retrievers[:1]
    assert hybrid.weights == list(HYBRID_MINILM["weights"])  # type: ignore[arg-type]
    assert ids[59] in [h.doc_id for h in hybrid.search(texts[0].split(" (")[0], 10)]


def test_the_index_is_built_once_and_read_back_from_the_checksummed_cache(corpus, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from agentenv.retrieval.cache import forget_loaded

    texts, ids = corpus
    texts, ids = texts[:40], ids[:40]
    with home_at(tmp_path):
        built = build_retriever("dense-minilm", texts, ids, corpus_checksum="small-v1")
        forget_loaded()
        entries = list((tmp_path / "indexes").iterdir())
        # the embedded vectors (flat) and the HNSW graph over them, each a checksummed entry
        assert len(entries) == 2 and all((e / "MANIFEST.json").is_file() for e in entries)
        assert built.params["index"] == "hnsw"
        loaded = build_retriever("dense-minilm", texts, ids, corpus_checksum="small-v1")
        assert loaded is not built
        assert loaded.search_batch(["war film", texts[3]], 5) == built.search_batch(
            ["war film", texts[3]], 5
        )
        forget_loaded()


def test_a_missing_extra_is_one_line_naming_the_install_command(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(onnx_minilm, "minilm_available", lambda: False)
    with pytest.raises(ImportError) as err:
        build_retriever("dense-minilm", ["a"], ["a"])
    assert (
        str(err.value)
        == "the MiniLM retrievers need the minilm extra: pip install 'agentenv[minilm]'"
    )
