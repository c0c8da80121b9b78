"""The shared answer grammar: entries, decoration, and spellings (the ASCII fast path equals the general one)."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentenv.engine.answer_grammar import (
    answer_entries,
    count_entries,
    is_space,
    strip_decoration,
    strip_space,
    strip_wrappers,
)
from agentenv.engine.spelling import SpellingIndex, is_subsequence, spell_once


@pytest.mark.parametrize(
    ("entry", "core"),
    [
        ("1. G", "G"),
        ("12) G", "G"),
        ("- G", "G"),
        ("* G", "G"),
        ("• G", "G"),
        ("**G**", "G"),
        ("__G__", "G"),
        ('"G"', "G"),
        ("“G”", "G"),
        ("«G»", "G"),
        ("G.", "G"),
        ("- **'G'**.", "G"),
        ("  G  ", "G"),
        ("-G", "-G"),
        ("*G*", "G"),
        ("_G_", "G"),
        ("`G`", "G"),
        ("***G***", "G"),
        ("`**G**`.", "G"),
        ("*G", "*G"),
        ("G_", "G_"),
        ("`G", "`G"),
        ("*G_", "*G_"),
        ("~~G~~", "~~G~~"),
        ("G..", "G."),
        ("G...", "G.."),
        ("**G.**.", "G."),
        ("Monsters, Inc..", "Monsters, Inc."),
        ("**Heat** (1995)", "**Heat** (1995)"),
        ("G!", "G!"),
        ("-", ""),
        ("•", ""),
        ("**", "**"),
    ],
)
def test_only_the_allow_list_is_stripped(entry: str, core: str) -> None:
    assert strip_decoration(entry) == core


def test_entries_skip_blank_lines_and_count_past_a_limit() -> None:
    text = "a\n\n  \nb;c\n"
    assert list(answer_entries(text, "\n;")) == [(1, "a"), (2, "b"), (3, "c")]
    assert list(answer_entries(text, "\n")) == [(1, "a"), (2, "b;c")]
    assert list(answer_entries(text, "\n;", limit=2)) == [(1, "a"), (2, "b")]
    assert count_entries(text, "\n;") == 3


def test_only_real_spaces_are_whitespace() -> None:
    assert strip_space("\u00a0G\u3000") == "G"
    assert strip_space("\x1cG\u200b") == "\x1cG\u200b"  # separators and format characters are kept
    assert not any(is_space(ch) for ch in "\x1c\x1d\x1e\x1f\x85\u200b\u2028\ufeff")


@settings(max_examples=400, derandomize=True)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=24))
def test_the_ascii_fast_path_equals_the_general_path(text: str) -> None:
    # A leading ideographic space (a Unicode space separator) forces the general path and changes nothing else.
    assert spell_once(text) == spell_once("\u3000" + text)


@settings(max_examples=300, derandomize=True)
@given(
    st.text(max_size=20), st.characters(categories=("Sm", "So", "Po", "Pd", "Ps", "Pe", "Mn", "Cf"))
)
def test_an_added_symbol_or_mark_never_matches(name: str, ch: str) -> None:
    index = SpellingIndex([("ref", name)])
    if not index.lookup(name).refs:
        return  # a name of only decoration-free spaces or marks has no words
    for poisoned in (ch + name, name + ch):
        if unicodedata.normalize("NFKC", ch) in " -\u2010\u2013":
            continue  # NFKC turned it into a space or a hyphen: the benign rules apply by design
        assert index.lookup(poisoned).refs == (), (name, ch)


def test_marks_may_be_left_out_never_added() -> None:
    assert is_subsequence((), ((1, ","),)) and not is_subsequence(((1, ","),), ())
    index = SpellingIndex([("a", "Lord of the Rings: The Two Towers"), ("b", "Airplane!")])
    assert index.lookup("lord of the rings the two towers").ref == "a"
    assert index.lookup("Airplane").ref == "b" and index.lookup("Airplane!!").ref is None
    assert index.lookup("!Airplane").ref is None and index.lookup("Air-plane").ref is None


def test_an_index_read_back_from_its_json_state_answers_the_same(tmp_path) -> None:  # noqa: ANN001
    import json

    from agentenv.engine.spelling_cache import cached_spelling_index
    from agentenv.storage.paths import home_at

    names = [
        ("a", "Neurofibromatosis, type II"),
        ("b", "Sjögren syndrome"),
        ("c", "Heat"),
        ("d", "Heat"),
    ]
    built = SpellingIndex(names)
    loaded = SpellingIndex.from_state(json.loads(json.dumps(built.state())))
    probes = (
        "neurofibromatosis type II",
        "Neurofibromatosis, type II",
        "sjogren syndrome",
        "Heat",
        "Heat!",
        "x",
    )
    assert [built.lookup(p) for p in probes] == [loaded.lookup(p) for p in probes]
    with home_at(tmp_path):
        first = cached_spelling_index("demo", "sha", "v1", lambda: built)
        again = cached_spelling_index(
            "demo", "sha", "v1", lambda: pytest.fail("the cache was not used")
        )
        assert [first.lookup(p) for p in probes] == [again.lookup(p) for p in probes]


@pytest.mark.parametrize(
    ("part", "name"),
    [
        ("**Heat**", "Heat"),
        ("*'Heat'*", "Heat"),
        ("`Heat`", "Heat"),
        ("Heat.", "Heat."),
        ("- Heat", "- Heat"),
        ("~~Heat~~", "~~Heat~~"),
    ],
)
def test_the_name_part_of_a_pair_loses_only_wrappers(part: str, name: str) -> None:
    """No list marker and no period inside a pair: only the pairs a whole entry may wear."""
    assert strip_wrappers(part) == name


@settings(max_examples=400, derandomize=True)
@given(st.text(alphabet="ab Z9\t\r\n\x0b\x0c\x1c\x1f\x01'-.", max_size=16))
def test_the_plain_ascii_path_equals_the_general_path(text: str) -> None:
    # Names without marks take ``str.split``; whitespace that it cuts at and the token pattern keeps
    # (line breaks, \x0b, \x0c, \x1c-\x1f) must send a text the long way.
    assert spell_once(text) == spell_once("\u3000" + text)
