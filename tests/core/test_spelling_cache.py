"""A spelling index cache entry whose body is damaged is rebuilt (with a warning), never misread."""

from __future__ import annotations

import logging

import pytest

from agentenv.engine.spelling import SpellingIndex


def test_a_damaged_entry_is_rebuilt_and_answers_the_same(
    tmp_path, caplog: pytest.LogCaptureFixture
) -> None:  # noqa: ANN001
    from agentenv.engine.spelling_cache import cached_spelling_index
    from agentenv.storage.paths import home_at

    names = [("a", "Sjögren syndrome"), ("b", "Heat"), ("c", "Heat")]
    probes = ("sjogren syndrome", "Sjögren Syndrome", "Heat", "x")
    with home_at(tmp_path):
        first = cached_spelling_index("demo", "sha", "v1", lambda: SpellingIndex(names))
        [path] = (tmp_path / "spelling").iterdir()
        data = bytearray(path.read_bytes())
        data[-1] ^= 0xFF
        path.write_bytes(bytes(data))
        caplog.set_level(logging.WARNING)
        rebuilt = cached_spelling_index("demo", "sha", "v1", lambda: SpellingIndex(names))
        assert any(
            str(path) in r.getMessage() and "rebuilding" in r.getMessage() for r in caplog.records
        )
        loaded = cached_spelling_index(
            "demo", "sha", "v1", lambda: pytest.fail("the rebuilt entry was not used")
        )
    assert (
        [first.lookup(p) for p in probes]
        == [rebuilt.lookup(p) for p in probes]
        == [loaded.lookup(p) for p in probes]
    )


def test_the_stored_state_is_what_a_json_round_trip_gives() -> None:
    import json

    from agentenv.engine.spelling import Spelling
    from agentenv.engine.spelling_cache import plain_state

    names = [
        ("a", "Sjögren syndrome"),
        ("b", "Heat"),
        ("c", "Heat"),
        ("d", "Neurofibromatosis, type II"),
    ]
    index = SpellingIndex(
        names, extra=(("short", [("e", Spelling(("x",), ((0, "!"), (1, "?"))))]),)
    )
    state = index.state()
    assert plain_state(state) == json.loads(json.dumps(state, ensure_ascii=False))
