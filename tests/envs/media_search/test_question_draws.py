"""The shipped draw positions: a fresh home makes the test (or validation) split alone from them, and
what they give is the published split bit for bit; a damaged file falls back to drawing every split."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentenv.corpora.media import catalog as media
from agentenv.corpora.media.catalog import load_catalog
from agentenv.envs.media_search.questions import cache as C
from agentenv.envs.media_search.questions import draws as D
from agentenv.envs.media_search.questions import record as Q


@settings(max_examples=40, deadline=None)
@given(
    draws=st.lists(
        st.sampled_from(["double", "int32", "int64", "choice", "normal"]), min_size=1, max_size=40
    ),
    seed=st.integers(0, 2**32 - 1),
    k=st.integers(0, 5),
)
def test_a_position_gives_back_the_exact_stream_state(draws: list[str], seed: int, k: int) -> None:
    """Whatever mix of 32- and 64-bit draws came before (a held half among them), the stream is restored."""
    rng = np.random.default_rng([seed, k])
    for draw in draws:
        if draw == "double":
            rng.random()
        elif draw == "int32":
            rng.integers(0, 10, dtype=np.int32)
        elif draw == "int64":
            rng.integers(0, 2**40)
        elif draw == "choice":
            rng.choice(7)
        else:
            rng.standard_normal()
    state = rng.bit_generator.state
    pos = D.position(np.random.default_rng([seed, k]), state)
    again = D.stream_at(seed, k, pos)
    if not state["has_uint32"]:  # numpy keeps a used half's stale bits; they are never read again
        state["uinteger"] = again.bit_generator.state["uinteger"]
    assert again.bit_generator.state == state
    assert again.random() == rng.random()


@pytest.mark.parametrize(
    "split",
    [pytest.param(s, marks=pytest.mark.slow) if s != "test" else s for s in D.REPLAYED_SPLITS],
)
def test_the_positions_replay_the_published_split(split: str) -> None:
    lines = D.replay_split(load_catalog(), split, Q.DEFAULT_STYLE)
    assert lines is not None, (
        "stale: python -m agentenv.envs.media_search.questions.draws rewrites it"
    )
    assert Q.checksum_of_lines(lines) == Q.SPLIT_CHECKSUMS[split]
    assert lines == list(C.question_rows(split).lines())


def test_a_damaged_positions_file_gives_nothing_to_use(tmp_path: Path) -> None:
    data = json.loads(D.DRAWS_FILE.read_text())
    kinds = data["styles"][Q.DEFAULT_STYLE]["test"]
    first = next(iter(kinds))
    kinds[first][0] = kinds[first][1]  # one question drawn twice, another never
    path = tmp_path / "draws.json"
    path.write_text(json.dumps(data))
    assert D.replay_split(load_catalog(), "test", Q.DEFAULT_STYLE, path=path) is None
    path.write_text("{not json")
    assert D.replay_split(load_catalog(), "test", Q.DEFAULT_STYLE, path=path) is None
    assert D.replay_split(load_catalog(), "train", Q.DEFAULT_STYLE) is None  # never shipped


def test_a_fresh_home_makes_only_the_split_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = load_catalog()
    published = list(C.question_rows("test").lines())
    monkeypatch.setenv("AGENTENV_HOME", str(tmp_path))
    monkeypatch.setattr(media, "_LOADED", {str(media.cache_path()): catalog})

    def no_full_generation(*args: object) -> None:
        raise AssertionError("every split was drawn")

    monkeypatch.setattr(C, "Generation", no_full_generation)
    monkeypatch.setattr(C, "_LOADED", {})
    monkeypatch.setattr(C, "_PENDING", {})
    assert list(C.question_rows("test").lines()) == published
    assert C._cache_file("test", Q.GENERATION_SEED).is_file()
    assert not C._cache_file("train", Q.GENERATION_SEED).exists()
    C._LOADED.clear()
    assert list(C.question_rows("test").lines()) == published  # read back from the cache file


def test_no_background_drawing_for_a_split_the_positions_make(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With $AGENTENV_BUILD_WORKERS > 1 a test env used to start drawing every split; it needs none."""
    catalog = load_catalog()
    monkeypatch.setenv("AGENTENV_HOME", str(tmp_path))
    monkeypatch.setattr(media, "_LOADED", {str(media.cache_path()): catalog})
    monkeypatch.setenv("AGENTENV_BUILD_WORKERS", "2")
    monkeypatch.setattr(C, "_LOADED", {})
    monkeypatch.setattr(C, "_PENDING", {})
    started: list[object] = []
    monkeypatch.setattr(C, "Generation", lambda *args: started.append(args))
    monkeypatch.setattr("agentenv.envs.media_search.questions.cache.generation_workers", lambda: 2)
    for split in D.REPLAYED_SPLITS:
        C.prefetch_questions(style=Q.DEFAULT_STYLE, split=split)
    assert started == [] and C._PENDING == {}
    C.prefetch_questions(style=Q.DEFAULT_STYLE, split="train")
    assert len(started) == 1
