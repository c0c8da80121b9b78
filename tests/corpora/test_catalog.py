"""The media catalog on the real movies.db: pinned source, cleaning rules, cache, indexes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentenv.corpora.media import catalog as media
from agentenv.corpora.media import source as media_source
from agentenv.corpora.media.catalog import (
    MOVIES_DB_SHA256,
    Catalog,
    catalog_stats,
    load_catalog,
    normalize_key,
)
from agentenv.corpora.media.files import file_sha256


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def test_source_file_has_the_pinned_sha256():
    assert file_sha256(media_source.movies_db_path()) == MOVIES_DB_SHA256


def test_a_different_source_file_is_refused(monkeypatch):
    monkeypatch.setattr(media_source, "MOVIES_DB_SHA256", "0" * 64)
    with pytest.raises(RuntimeError, match="expected 0000.*bokeh-sampledata==2026.1"):
        media_source.verified_db()


def test_counts_and_ids(catalog):
    assert len(catalog) == 17_472
    assert catalog.checksum == MOVIES_DB_SHA256
    ids = [t.id for t in catalog]
    assert len(set(ids)) == len(ids)
    # Two IMDb ids are shared by two rows each: those four rows get m<ID> ids.
    assert sorted(i for i in ids if i.startswith("m")) == [
        "m1393195",
        "m182692",
        "m3620669",
        "m5036736",
    ]
    assert min(t.year for t in catalog) == 1940 and max(t.year for t in catalog) == 2014


def test_stats(catalog):
    stats = catalog_stats(catalog)
    assert stats["titles"] == 17_472
    assert stats["with_runtime"] == 17_472 - 1_299
    assert stats["features"] == 17_472 - 1_299 - 56
    assert stats["genres"]["Drama"] == 8_925
    assert "" not in stats["genres"]
    assert stats["people"] > 60_000


def test_inception_record(catalog):
    t = catalog.get("tt1375666")
    assert (t.title, t.year, t.runtime, t.directors) == (
        "Inception",
        2010,
        148,
        ("Christopher Nolan",),
    )
    assert "Leonardo DiCaprio" in t.cast and "Sci-Fi" in t.genres
    assert t.rating == 8.1 and t.oscars_won == 3 and t.is_feature
    assert catalog.find_title("inception") == [t]


def test_split_off_suffixes_are_rejoined(catalog):
    iron_man = catalog.find_title("Iron Man", 2008)[0]
    assert "Robert Downey Jr." in iron_man.cast
    batman_forever = catalog.find_title("Batman Forever")[0]
    assert "Ed Begley Jr." in batman_forever.cast and "Ed Begley" not in batman_forever.cast
    apollo = catalog.find_title("Apollo 13")[0]
    assert "William Broyles Jr." in apollo.writers
    for t in catalog:
        for names in (t.directors, t.writers, t.cast):
            assert not any(n in ("Jr.", "Sr.", "Jr", "Sr") for n in names), t.id
    downey = catalog.person("Robert Downey, Jr.")
    assert downey is not None and downey.name == "Robert Downey Jr." and len(downey.acted) >= 50


def test_empty_strings_become_empty_values(catalog):
    no_cast = [t for t in catalog if not t.cast]
    assert len(no_cast) == 1_771
    assert all(isinstance(t.cast, tuple) for t in no_cast)
    assert all(t.awards is None or t.awards.strip() for t in catalog)
    assert not any("" in t.genres for t in catalog)


def test_placeholder_release_dates_are_dropped(catalog):
    assert not any(t.released and t.released.endswith("-01-01") for t in catalog)
    assert all(t.released is None or t.released.startswith(str(t.year)) for t in catalog)


def test_person_index_is_normalised(catalog):
    assert catalog.person("christopher NOLAN").name == "Christopher Nolan"
    armendariz = catalog.person("pedro armendariz jr")
    assert armendariz is not None and armendariz.name == "Pedro Armendáriz Jr."
    assert catalog.person("Nolan") is None
    assert normalize_key("Jean-Luc Godard") == "jean luc godard"


def test_documents_describe_each_title(catalog):
    ids, texts = catalog.documents()
    assert len(ids) == len(texts) == len(catalog)
    doc = texts[ids.index("tt1375666")]
    assert doc.startswith("Inception (2010).") and "directed by Christopher Nolan" in doc


def test_cache_is_rebuilt_when_corrupt(tmp_path, monkeypatch, catalog):
    monkeypatch.setenv("AGENTENV_HOME", str(tmp_path))
    built = load_catalog()
    path = media.cache_path()
    assert str(tmp_path) in str(path) and path.is_file()
    media._LOADED.clear()
    assert load_catalog().titles == built.titles == catalog.titles  # from the cache
    path.write_bytes(path.read_bytes()[:-100])  # truncated
    media._LOADED.clear()
    rebuilt = load_catalog()
    assert rebuilt.titles == catalog.titles
    assert rebuilt.people.keys() == catalog.people.keys()
    media._LOADED.clear()


def test_import_builds_nothing(tmp_path):
    code = (
        "import agentenv, agentenv.corpora.media.catalog, agentenv.envs.media_search.questions.record, "
        "agentenv.envs.media_search.tools.film_tools, agentenv.envs.media_search.grading.grade"
    )
    env = dict(os.environ, AGENTENV_HOME=str(tmp_path / "home"))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    assert not (tmp_path / "home").exists()


def test_the_packed_people_build_equals_the_dict_build(catalog):
    """The cold build keeps :meth:`People.build`'s packed table; it must be :func:`build_people`'s
    table, person for person and in the same order, and be written to the cache byte for byte alike."""
    packed, plain = media.People.build(catalog.titles), media.build_people(catalog.titles)
    assert list(packed) == list(plain) and len(packed) == len(plain) > 60_000
    assert all(packed[key] == person for key, person in plain.items())
    assert media.key_names(packed) == media.key_names(plain)
    assert media.People.encode(packed) == media.People.encode(plain)
    assert packed.role_counts() == {
        k: (len(p.directed), len(p.wrote), len(p.acted)) for k, p in plain.items()
    }


def _split_names_reference(value):
    """The credit splitting rules written as plainly as possible (the fast path must agree)."""
    items = []
    for raw in (value or "").split(","):
        item = " ".join(raw.split())
        if not item:
            continue
        if item in {"Jr.", "Sr.", "Jr", "Sr", "II", "III", "IV"} and items:
            items[-1] = f"{items[-1]} {item}"
        else:
            items.append(item)
    return tuple(dict.fromkeys(items))


@settings(max_examples=300, derandomize=True)
@given(
    st.lists(
        st.sampled_from(
            ["Ed Begley", " Jr.", "Jr", " II", "III", "", " ", "A  B", "Ed Begley Jr."]
        ),
        max_size=6,
    )
)
def test_split_names_agrees_with_the_plain_rules(parts):
    value = ",".join(parts)
    assert media_source.split_names(value) == _split_names_reference(value)
