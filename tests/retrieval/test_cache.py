"""The on-disk index cache: reuse, keys, and never trusting a damaged entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentenv.retrieval import build_retriever
from agentenv.retrieval.bm25 import BM25Retriever
from agentenv.retrieval.cache import cache_key, cached_index, forget_loaded, index_dir
from agentenv.retrieval.storage import MANIFEST
from agentenv.retrieval.tokenize import Tokenizer

from ._corpus import film_docs, film_queries

TEXTS, IDS = film_docs()
TEXTS, IDS = TEXTS[:3000], IDS[:3000]
PARAMS = {"k1": 1.5}


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTENV_HOME", str(tmp_path))
    return tmp_path


class Counter:
    def __init__(self) -> None:
        self.builds = 0

    def __call__(self) -> BM25Retriever:
        self.builds += 1
        return BM25Retriever.from_texts(TEXTS, IDS)


def entry() -> Path:
    return index_dir("bm25", "films-v1", PARAMS)


def test_built_once_then_loaded(home: Path) -> None:
    build = Counter()
    first = cached_index("bm25", "films-v1", PARAMS, build)
    second = cached_index("bm25", "films-v1", PARAMS, build)
    assert build.builds == 1
    assert entry().is_relative_to(home / "indexes")
    assert (entry() / MANIFEST).is_file()
    queries = film_queries(50, seed=51)
    assert second.search_batch(queries, 10) == first.search_batch(queries, 10)
    assert [p.name for p in (home / "indexes").iterdir()] == [entry().name]  # no temp dirs left


def test_one_index_per_process_is_shared(home: Path) -> None:
    build = Counter()
    first = cached_index("bm25", "films-v1", PARAMS, build)
    assert (
        cached_index("bm25", "films-v1", PARAMS, build) is first
    )  # every env of a process shares it
    forget_loaded()
    assert (
        cached_index("bm25", "films-v1", PARAMS, build) is not first and build.builds == 1
    )  # loaded, not built


def test_key_covers_kind_corpus_and_params() -> None:
    base = cache_key("bm25", "c1", {"k1": 1.5, "tokenizer": Tokenizer()})
    assert base == cache_key("bm25", "c1", {"tokenizer": Tokenizer(), "k1": 1.5})
    assert base != cache_key("bm25", "c2", {"k1": 1.5, "tokenizer": Tokenizer()})
    assert base != cache_key("dense", "c1", {"k1": 1.5, "tokenizer": Tokenizer()})
    assert base != cache_key("bm25", "c1", {"k1": 1.5, "tokenizer": Tokenizer(stem="none")})
    with pytest.raises(TypeError, match="fingerprint"):
        cache_key("bm25", "c1", {"thing": object()})


def corrupt_flip_byte(d: Path) -> None:
    f = d / "index" / "weights.npy"
    data = bytearray(f.read_bytes())
    data[-3] ^= 0xFF
    f.write_bytes(bytes(data))


def corrupt_truncate(d: Path) -> None:
    f = d / "index" / "docs.npy"
    f.write_bytes(f.read_bytes()[:100])


def corrupt_delete(d: Path) -> None:
    (d / "index" / "bm25.json").unlink()


def corrupt_extra_file(d: Path) -> None:
    (d / "index" / "stray.npy").write_bytes(b"?")


def corrupt_manifest(d: Path) -> None:
    (d / MANIFEST).write_text("{not json")


def corrupt_no_manifest(d: Path) -> None:
    (d / MANIFEST).unlink()


@pytest.mark.parametrize(
    "damage",
    [
        corrupt_flip_byte,
        corrupt_truncate,
        corrupt_delete,
        corrupt_extra_file,
        corrupt_manifest,
        corrupt_no_manifest,
    ],
)
def test_damaged_entry_is_rebuilt(damage) -> None:  # type: ignore[no-untyped-def]
    build = Counter()
    good = cached_index("bm25", "films-v1", PARAMS, build)
    damage(entry())
    forget_loaded()  # a new process: the index this one shares is not read from disk again
    again = cached_index("bm25", "films-v1", PARAMS, build)
    assert build.builds == 2
    queries = film_queries(30, seed=52)
    assert again.search_batch(queries, 10) == good.search_batch(queries, 10)
    forget_loaded()
    cached_index("bm25", "films-v1", PARAMS, build)  # the rebuilt entry is sound
    assert build.builds == 2


def test_failed_save_leaves_nothing(home: Path) -> None:
    class Broken:
        def save(self, path: Path) -> None:
            path.mkdir(parents=True)
            (path / "half").write_bytes(b"partial")
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        cached_index("bm25", "films-v1", PARAMS, Broken)
    assert list((home / "indexes").iterdir()) == []


def test_factory_uses_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    original = BM25Retriever.from_texts.__func__  # type: ignore[attr-defined]

    def counting(cls, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(BM25Retriever, "from_texts", classmethod(counting))
    a = build_retriever("bm25", TEXTS, IDS, corpus_checksum="films-v1")
    b = build_retriever("bm25", TEXTS, IDS, corpus_checksum="films-v1")
    assert len(calls) == 1
    assert a.search("drama", 5) == b.search("drama", 5)
    build_retriever("bm25", TEXTS, IDS, corpus_checksum="films-v1", k1=1.2)  # new params: new index
    build_retriever(
        "bm25", TEXTS, [f"x{i}" for i in IDS], corpus_checksum="films-v1"
    )  # new ids too
    assert len(calls) == 3
    build_retriever("bm25", TEXTS, IDS)  # no checksum: no cache
    assert len(calls) == 4


def test_factory_specs() -> None:
    r = build_retriever("bm25", TEXTS[:50], IDS[:50])
    assert build_retriever(r) is r
    ref = build_retriever("bm25-reference", TEXTS[:50], IDS[:50], corpus_checksum="x")
    assert ref.search("drama", 3) == r.search("drama", 3)
    with pytest.raises(ValueError, match="unknown retriever .bm26.; use one of bm25, "):
        build_retriever("bm26", TEXTS[:5])
    with pytest.raises(ValueError, match="needs the corpus"):
        build_retriever("bm25")
    with pytest.raises(TypeError):
        build_retriever(42)  # type: ignore[arg-type]
