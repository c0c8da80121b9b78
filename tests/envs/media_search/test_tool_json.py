"""Every title's search row comes from a cache that is written again when it is damaged or stale."""

from __future__ import annotations

import logging
import marshal

import pytest

from agentenv.corpora.media.catalog import Catalog, load_catalog
from agentenv.envs.media_search.tools import tool_json
from agentenv.storage.checksummed_cache import pack_bytes, unpack_bytes
from agentenv.storage.paths import home_at


@pytest.fixture
def catalog(tmp_path):  # type: ignore[no-untyped-def]
    """The pinned catalog (loaded from the shared home), with a home of the test's own for the rows file:
    a damaged or stale file written in the shared home would make every other process of the run
    warn that it rebuilds it."""
    loaded = load_catalog()
    with home_at(tmp_path / "home"):
        yield loaded


def _rows_file():  # type: ignore[no-untyped-def]
    return tool_json.rows_path()


def test_cached_rows_are_the_rows_written_from_each_title(catalog: Catalog) -> None:
    rows = tool_json.search_prefixes(catalog)
    assert _rows_file().is_file()
    assert list(rows) == [t.id for t in catalog.titles]
    assert all(rows[t.id] == tool_json.result_prefix(t) for t in catalog.titles)


def test_a_damaged_rows_file_is_written_again(
    catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    good = tool_json.search_prefixes(catalog)
    path = _rows_file()
    header = unpack_bytes(path, {})[0]  # type: ignore[index]
    header.pop("body_sha256")
    path.write_bytes(pack_bytes(header, marshal.dumps(["one row too few"])))  # intact, wrong rows
    with caplog.at_level(logging.WARNING):
        assert tool_json.search_prefixes(catalog) == good
    assert f"{path.name} is corrupt" in caplog.text
    assert len(marshal.loads(unpack_bytes(path, header)[1])) == len(catalog)  # type: ignore[index]


def test_rows_written_by_other_code_are_not_read(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool_json.search_prefixes(catalog)
    monkeypatch.setattr(tool_json, "_code_version", lambda: "another")
    calls: list[int] = []
    real = tool_json.result_prefix
    monkeypatch.setattr(tool_json, "result_prefix", lambda t: calls.append(1) or real(t))
    tool_json.search_prefixes(catalog)
    assert len(calls) == len(catalog)


def test_a_catalog_of_your_own_gets_its_rows_without_the_cache(catalog: Catalog) -> None:
    title = catalog.titles[0]
    own = Catalog([title], "not-the-pinned-catalog")
    assert tool_json.search_prefixes(own) == {title.id: tool_json.result_prefix(title)}
