"""The start-up paths: questions read line by line, parallel generation, lazy case lists and documents.

Each fast path must give exactly what the plain path gives (same questions,
same split checksums, same cases, same documents), and a damaged question
cache must still be rebuilt with a warning, never trusted.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from agentenv.corpora.media import catalog as media
from agentenv.corpora.media.catalog import load_catalog
from agentenv.corpora.media.files import write_atomic
from agentenv.envs.media_search.questions import cache as C
from agentenv.envs.media_search.questions import generation as G
from agentenv.envs.media_search.questions import record as Q
from agentenv.envs.rare_disease.patients.splits import (
    SPLITS,
    case_list,
    cases_checksum,
    split_cases,
)


@pytest.fixture(scope="module")
def test_split() -> list[Q.Question]:
    return C.load_questions("test")


def test_question_rows_decode_on_access_and_match_the_list(test_split: list[Q.Question]) -> None:
    rows = C.question_rows("test")
    assert len(rows) == len(test_split) == Q.SPLIT_SIZES["test"]
    assert rows[5] == test_split[5] and rows[-1] == test_split[-1] and rows[2:4] == test_split[2:4]
    assert list(rows) == test_split
    assert Q.split_checksum(rows) == Q.split_checksum(test_split) == Q.SPLIT_CHECKSUMS["test"]


def test_canonical_lines_are_the_published_checksum_input(test_split: list[Q.Question]) -> None:
    lines = [Q.canonical_json(q) for q in test_split]
    assert Q.checksum_of_lines(lines) == Q.SPLIT_CHECKSUMS["test"]
    assert Q.Question.from_dict(test_split[0].to_dict()) == test_split[0]
    data = test_split[0].to_dict()
    data["plan"][0]["arguments"]["x"] = 1  # to_dict shares nothing with the question
    assert "x" not in test_split[0].plan[0]["arguments"]


def test_question_id_matches_json_dumps() -> None:
    import hashlib
    import json

    for args in [
        ("lookup", 'Who "directed" Amélie?\n', "Jean-Pierre Jeunet"),
        ("count", "\u2028\x00\\", "3"),
    ]:
        blob = json.dumps(list(args), ensure_ascii=False).encode()
        assert Q.question_id(*args) == "mq-" + hashlib.sha256(blob).hexdigest()[:16]


@pytest.fixture
def home_with_questions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, test_split: list[Q.Question]
) -> Path:
    """A fresh home whose "generation" returns the current splits at once (the real one takes seconds)."""
    lines = {s: [Q.canonical_json(q) for q in C.load_questions(s)] for s in Q.SPLIT_SIZES}

    class Instant:
        def __init__(self, *args: object) -> None:
            pass

        def lines(self) -> dict[str, list[bytes]]:
            return lines

    catalog = load_catalog()
    monkeypatch.setenv("AGENTENV_HOME", str(tmp_path))
    monkeypatch.setattr(
        media, "_LOADED", {str(media.cache_path()): catalog}
    )  # no catalog rebuild in this home
    monkeypatch.setattr(C, "Generation", Instant)
    monkeypatch.setattr(C, "_LOADED", {})
    monkeypatch.setattr(C, "_PENDING", {})
    return tmp_path


@pytest.mark.parametrize("damage", ["flip", "rows"])
def test_damaged_question_cache_is_rebuilt_with_a_warning(
    home_with_questions: Path,
    caplog: pytest.LogCaptureFixture,
    damage: str,
    test_split: list[Q.Question],
) -> None:
    assert list(C.question_rows("test")) == test_split  # first build: writes the cache
    path = C._cache_file("test", Q.GENERATION_SEED)
    assert str(home_with_questions) in str(path) and path.is_file()
    if damage == "flip":
        data = bytearray(path.read_bytes())
        data[-1] ^= 0xFF
        path.write_bytes(bytes(data))
    else:  # checksum right, one row short: another version's file under this header
        from agentenv.storage.checksummed_cache import pack_bytes

        body = path.read_bytes().partition(b"\n")[2].split(b"\n")[:-1]
        header = {**C._header("test", Q.GENERATION_SEED), "rows": len(body)}
        write_atomic(path, pack_bytes(header, b"\n".join(body)))
    C._LOADED.clear()
    caplog.set_level(logging.WARNING)
    assert list(C.question_rows("test")) == test_split
    assert [
        r for r in caplog.records if str(path) in r.getMessage() and "rebuilding" in r.getMessage()
    ]


@pytest.mark.slow
def test_parallel_generation_gives_the_published_splits() -> None:
    lines = G.Generation(load_catalog(), Q.GENERATION_SEED, 2).lines()
    assert {s: Q.checksum_of_lines(v) for s, v in lines.items()} == Q.SPLIT_CHECKSUMS


def test_case_list_is_split_cases_computed_on_access(kb) -> None:
    for split in SPLITS:
        lazy = case_list(kb, split)
        assert tuple(lazy) == split_cases(kb, split)
        assert lazy[-1] == split_cases(kb, split)[-1] and lazy[1:3] == split_cases(kb, split)[1:3]
    assert cases_checksum(case_list(kb, "test", 2)) == cases_checksum(split_cases(kb, "test", 2))
    with pytest.raises(IndexError):
        case_list(kb, "test")[len(case_list(kb, "test"))]


def test_documents_are_written_on_first_access() -> None:
    catalog = load_catalog()
    ids, texts = catalog.documents()
    assert texts._texts is None and len(texts) == len(ids) == len(catalog)
    assert texts[0] == catalog[0].document() and list(texts) == [t.document() for t in catalog]
    assert texts == [t.document() for t in catalog]
