"""The shared tokenizer: its rules, its determinism, and its fingerprint."""

from __future__ import annotations

import doctest
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentenv.retrieval.tokenize as tokmod
from agentenv.retrieval.tokenize import ENGLISH_STOPWORDS, Tokenizer, plural_stem, tokenize

from ._corpus import film_docs


def test_doctests_pass() -> None:
    result = doctest.testmod(tokmod)
    assert result.attempted >= 6
    assert result.failed == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("   ...!? ", []),
        ("Ｆｕｌｌ-ｗｉｄｔｈ", ["full", "width"]),  # NFKC folds full-width forms
        ("ﬁnal ﬂight", ["final", "flight"]),  # and ligatures
        ("STRASSE Straße", ["strasse", "strasse"]),  # casefold, not lower
        ("Gérard Depardieu", ["gerard", "depardieu"]),
        ("Ge\u0301rard", ["gerard"]),  # decomposed accent
        ("snake_case words", ["snake", "case", "word"]),  # underscore separates
        ("Die Hard 2 (1990)", ["die", "hard", "2", "1990"]),
        ("Ōkami 大神 Москва", ["okami", "大神", "москва"]),
    ],
)
def test_default_rules(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_accents_kept_but_normalised_when_not_stripped() -> None:
    tok = Tokenizer(strip_accents=False, stem="none")
    composed, decomposed = "caf\u00e9", "cafe\u0301"
    assert tok(composed) == tok(decomposed) == ["café"]


def test_switches() -> None:
    text = "The Birds of the Islands"
    assert Tokenizer()(text) == ["bird", "island"]
    assert Tokenizer(stopwords=False)(text) == ["the", "bird", "of", "the", "island"]
    assert Tokenizer(stem="none")(text) == ["birds", "islands"]
    assert Tokenizer(lowercase=False, stopwords=False, stem="none")(text) == text.split()


def test_stop_list_is_small_and_lowercase() -> None:
    assert 100 < len(ENGLISH_STOPWORDS) < 200
    assert all(w == w.casefold() and w.isalpha() for w in ENGLISH_STOPWORDS)
    assert {"film", "man", "love", "war"}.isdisjoint(ENGLISH_STOPWORDS)  # title words stay


def test_plural_stem_meets_singular() -> None:
    for singular, plural in [
        ("movie", "movies"),
        ("pony", "ponies"),
        ("horse", "horses"),
        ("star", "stars"),
        ("city", "cities"),
        ("story", "stories"),
        ("wolf", "wolfs"),
        ("boy", "boys"),
    ]:
        assert plural_stem(singular) == plural_stem(plural), (singular, plural)
    for keep in ["bus", "glass", "lewis", "paris", "gas", "dr"]:
        assert plural_stem(keep) == keep


def test_tokenizing_tokens_is_stable_on_the_film_catalog() -> None:
    """Stemmed output is a fixed point: re-tokenizing it changes nothing."""
    texts, _ = film_docs()
    for text in texts[::7]:
        tokens = tokenize(text)
        assert tokenize(" ".join(tokens)) == tokens


def test_deterministic_and_pure() -> None:
    texts, _ = film_docs()
    a = [Tokenizer()(t) for t in texts[:500]]
    b = [Tokenizer()(t) for t in texts[:500]]
    assert a == b


def test_fingerprint_tracks_every_parameter() -> None:
    base = Tokenizer()
    variants = [
        Tokenizer(lowercase=False),
        Tokenizer(strip_accents=False),
        Tokenizer(stopwords=False),
        Tokenizer(stem="none"),
    ]
    prints = {base.fingerprint()} | {v.fingerprint() for v in variants}
    assert len(prints) == 1 + len(variants)
    assert Tokenizer().fingerprint() == base.fingerprint()
    assert Tokenizer(**base.params()) == base


def test_unknown_stemmer_rejected() -> None:
    with pytest.raises(ValueError, match="unknown stemmer"):
        Tokenizer(stem="porter")  # type: ignore[arg-type]


def test_snowball_needs_pystemmer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "Stemmer", None)  # simulate "not installed"
    with pytest.raises(ImportError, match="PyStemmer"):
        Tokenizer(stem="snowball")


def test_a_corpus_tokenized_at_once_equals_each_text_alone() -> None:
    """``tokenize_many`` (one memo pass over the distinct words) is the per-text tokenizer."""
    texts, _ = film_docs()
    for tokenizer in (Tokenizer(), Tokenizer(strip_accents=False), Tokenizer(stopwords=False)):
        alone = [Tokenizer(**tokenizer.params())(t) for t in texts]
        assert tokenizer.tokenize_many(texts) == alone


@settings(max_examples=300, derandomize=True)
@given(st.lists(st.text(alphabet="aZé_9 -'\n\u0301\u00df\u0130x.", max_size=12), max_size=5))
def test_words_of_plain_and_accented_texts_are_the_regex_runs(texts: list[str]) -> None:
    """ASCII texts are split by ``str.translate`` and ``str.split``, others by the regex: the same
    runs of letters and digits; accents stripped in one pass over the distinct characters."""
    import re
    import unicodedata

    tok = Tokenizer()
    for text in texts:
        folded = "".join(
            c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)
        ).casefold()
        assert tok.words(text) == re.findall(r"[^\W_]+", folded)
    assert tok.tokenize_many(texts) == [Tokenizer()(t) for t in texts]
