"""The one tokenizer every retrieval back-end shares.

Lexical back-ends only agree when they see the same tokens: the BM25 index,
its ``rank_bm25`` reference and the hashed-n-gram encoder all call a
:class:`Tokenizer`, and every cached index is keyed by its
:meth:`Tokenizer.fingerprint`, so changing a rule can never reuse a stale
index.

The rules, in order:

1. Unicode normalisation: NFKC (or NFKD when accents are stripped), so that
   ligatures, full-width letters and composed/decomposed accents agree.
2. ``str.casefold`` (Unicode-aware lower-casing: ``"Straße"`` → ``"strasse"``).
3. Optionally drop combining marks (``"Gérard"`` → ``"gerard"``): users type
   names without accents far more often than with them.
4. Split on runs of Unicode letters and digits (regex ``[^\\W_]+``); the
   underscore separates words.
5. Optionally drop a small built-in English stop-word list (a word goes if
   it or its stem is listed).
6. Optionally stem: ``"plural"`` is :func:`plural_stem`, Harman's S-stemmer
   (Harman 1991, "How effective is suffixing?") plus Porter's final y → i, a
   few deterministic rules that fold plurals and barely touch names;
   ``"snowball"`` uses PyStemmer when it is installed.

Example:
    >>> tokenize("The Lord of the Rings: The Two Towers (2002)")
    ['lord', 'ring', 'two', 'tower', '2002']
    >>> tokenize("Amélie — Jean-Pierre Jeunet")
    ['ameli', 'jean', 'pierre', 'jeunet']
    >>> Tokenizer(stopwords=False, stem="none")("The Lord of the Rings")
    ['the', 'lord', 'of', 'the', 'rings']
    >>> Tokenizer().fingerprint() == Tokenizer().fingerprint()
    True
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Literal

__all__ = ["ENGLISH_STOPWORDS", "Tokenizer", "plural_stem", "terms_bound", "tokenize"]

_WORD = re.compile(r"[^\W_]+")
_CHUNK = 2048
"""Texts :meth:`Tokenizer.tokenize_many` reads at once: the film catalog's 777k words held together
raised a cold first run's peak memory by 35 MB."""
_ASCII_NON_WORD = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isalnum()})
"""Every ASCII character outside ``_WORD`` to a space: ``str.split`` then gives ``_WORD``'s runs."""

# A deliberately small list: function words only. Content words such as
# "film" or "man" can be part of a title and must stay searchable.
ENGLISH_STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all am an and any are as at be because been
    before being below between both but by can could did do does doing down during
    each few for from further had has have having he her here hers herself him
    himself his how i if in into is it its itself just me more most my myself no
    nor not of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these
    they this those through to too under until up very was we were what when where
    which while who whom why with would you your yours yourself yourselves
    s t d ll m re ve
    """.split()
)

StemName = Literal["none", "plural", "snowball"]


def plural_stem(word: str) -> str:
    """Fold English plurals: Harman's S-stemmer plus Porter's final y → i.

    The first matching plural rule applies (``-ies`` → ``-i``; ``-es`` →
    ``-e`` unless ``-aes/-ees/-oes``; ``-s`` → ``""`` unless ``-us/-ss/-is``),
    then a final ``-y`` or ``-ie`` becomes ``-i`` so that "movie" and
    "movies", "pony" and "ponies" meet. Words of three letters or fewer are
    left alone so that short names and acronyms survive.

    Example:
        >>> [plural_stem(w) for w in ["ponies", "pony", "movies", "movie", "horses", "cats"]]
        ['poni', 'poni', 'movi', 'movi', 'horse', 'cat']
        >>> [plural_stem(w) for w in ["glass", "bus", "lewis", "days", "heroes", "gas"]]
        ['glass', 'bus', 'lewis', 'day', 'heroe', 'gas']
    """
    if len(word) <= 3:
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "i"
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        word = word[:-1]
    elif word.endswith("s") and not word.endswith(("us", "ss", "is")):
        word = word[:-1]
    if len(word) > 3:
        if word.endswith("y"):
            return word[:-1] + "i"
        if word.endswith("ie"):
            return word[:-1]
    return word


def _snowball_stemmer():  # type: ignore[no-untyped-def]
    try:
        import Stemmer  # PyStemmer: optional
    except ImportError as err:  # pragma: no cover - depends on the install
        raise ImportError("stem='snowball' needs PyStemmer: pip install PyStemmer") from err
    return Stemmer.Stemmer("english")


@dataclass(frozen=True)
class Tokenizer:
    """Text → list of tokens, with every rule a visible, hashable parameter.

    Calling the tokenizer is deterministic and has no global state besides a
    per-instance memo of stemmed words (a pure cache).

    Example:
        >>> tok = Tokenizer(strip_accents=False, stem="none")
        >>> tok("Amélie Poulain's fabulous destinies")
        ['amélie', 'poulain', 'fabulous', 'destinies']
        >>> tok.fingerprint().startswith("tok1-")
        True
    """

    lowercase: bool = True
    """Casefold the text (Unicode-aware lower-casing)."""
    strip_accents: bool = True
    """Remove combining marks after NFKD, so "é" matches "e"."""
    stopwords: bool = True
    """Drop :data:`ENGLISH_STOPWORDS`."""
    stem: StemName = "plural"
    """``"none"``, ``"plural"`` (Harman S-stemmer) or ``"snowball"`` (PyStemmer)."""
    _memo: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.stem not in ("none", "plural", "snowball"):
            raise ValueError(f"unknown stemmer {self.stem!r}; use 'none', 'plural' or 'snowball'")
        if self.stem == "snowball":
            object.__setattr__(self, "_snowball", _snowball_stemmer())

    def normalise(self, text: str) -> str:
        """Apply rules 1–3 (normalisation, casefolding, accent stripping)."""
        if not text.isascii():
            if self.strip_accents:
                text = _without_combining(unicodedata.normalize("NFKD", text))
            else:
                text = unicodedata.normalize("NFKC", text)
        return text.casefold() if self.lowercase else text

    def __call__(self, text: str) -> list[str]:
        """Tokenize one text."""
        words = self.words(text)
        if self.stem == "none":
            return [w for w in words if w not in ENGLISH_STOPWORDS] if self.stopwords else words
        memo = self._memo
        out = []
        for w in words:
            s = memo.get(w)
            if s is None:
                s = self.word_token(w)
                if len(memo) < 1_000_000:  # bound the memo on adversarial input
                    memo[w] = s
            if s:
                out.append(s)
        return out

    def words(self, text: str) -> list[str]:
        """The normalised words of ``text``, before stop-words and stemming: ``word_token`` of each,
        dropping the empty ones, is ``self(text)``.

        Example:
            >>> Tokenizer().words("The Others (2001)")
            ['the', 'others', '2001']
        """
        text = self.normalise(text)
        if text.isascii():  # the same runs of letters and digits, without the regex engine
            return text.translate(_ASCII_NON_WORD).split()
        return _WORD.findall(text)

    def word_token(self, word: str) -> str:
        """The token of one normalised word (from :meth:`words`); ``""`` when it is dropped.

        A word goes if it or its stem is a stop word ("others" like "other"), which also
        makes re-tokenizing tokens a no-op.

        Example:
            >>> [Tokenizer().word_token(w) for w in ("others", "the", "films", "2001")]
            ['', '', 'film', '2001']
        """
        if self.stem == "none":
            return "" if self.stopwords and word in ENGLISH_STOPWORDS else word
        s = self._stem(word)
        if self.stopwords and (word in ENGLISH_STOPWORDS or s in ENGLISH_STOPWORDS):
            return ""
        return s

    def _stem(self, word: str) -> str:
        if self.stem == "plural":
            return plural_stem(word)
        return self._snowball.stemWord(word)  # type: ignore[attr-defined]

    def tokenize_many(self, texts: list[str]) -> list[list[str]]:
        """Tokenize a corpus: ``[self(t) for t in texts]``, computed corpus-wide.

        Why: the film catalog's 17,472 documents took a tenth of a cold first run. Each distinct word
        is looked up in the memo (or tokenized) once for the whole corpus, and each text's tokens
        are then one ``map`` (a test compares both ways).
        """
        if self.stem == "none":
            return [self(t) for t in texts]
        out: list[list[str]] = []
        for start in range(0, len(texts), _CHUNK):  # a chunk's words at a time, not the corpus's
            words_of = list(map(self.words, texts[start : start + _CHUNK]))
            memo = self._memo
            table = {w: self.word_token(w) for w in set().union(*words_of).difference(memo)}
            if len(memo) + len(table) <= 1_000_000:  # the memo's bound, as in __call__
                memo.update(table)
                token = memo.__getitem__
            else:
                table.update((w, memo[w]) for w in set().union(*words_of).difference(table))
                token = table.__getitem__
            out += [list(filter(None, map(token, words))) for words in words_of]
        return out

    def params(self) -> dict[str, object]:
        """The parameters that define the output, as a JSON-able dict."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.init}

    def fingerprint(self) -> str:
        """A short string that changes whenever the tokens could change.

        It goes into index cache keys. Bump the ``tok1`` prefix whenever a rule
        in this module changes meaning (the stop list, the regex, a stemmer rule).
        """
        blob = json.dumps(self.params(), sort_keys=True).encode()
        return "tok1-" + hashlib.sha256(blob).hexdigest()[:16]


def _without_combining(text: str) -> str:
    """``text`` without its combining marks (``unicodedata.combining(c) != 0``): the distinct
    characters are tested, and the marks deleted by one regex pass, not a test of every character.

    Example:
        >>> _without_combining("Ame\u0301lie")
        'Amelie'
    """
    marks = "".join(sorted(c for c in set(text) if unicodedata.combining(c)))
    return _mark_class(marks).sub("", text) if marks else text


@lru_cache(maxsize=1024)
def _mark_class(marks: str) -> re.Pattern[str]:
    """One character class of ``marks`` (no combining mark is special inside a class), compiled once."""
    return re.compile(f"[{marks}]")


DEFAULT_TOKENIZER = Tokenizer()


def tokenize(text: str) -> list[str]:
    """Tokenize with the default :class:`Tokenizer` (accents stripped, stop-words dropped, plurals folded)."""
    return DEFAULT_TOKENIZER(text)


_EVERY_NORMALISATION = tuple(
    Tokenizer(lowercase=lowercase, strip_accents=strip, stopwords=False, stem="none")
    for lowercase in (True, False)
    for strip in (True, False)
)
"""One tokenizer per way :meth:`Tokenizer.normalise` can read a text: its words are the most
terms any :class:`Tokenizer` reads (stop-words and stems only ever drop or shorten words)."""


def terms_bound(text: str) -> int:
    """The most terms any retriever of this package reads from ``text``: a bound for work budgets.

    Why not a word count alone: the tokenizers split on ``_`` (``de_la_de`` is three terms, one
    ``\\w+`` word), compatibility normalisation turns one character into several (``½½`` is
    ``1⁄21⁄2``: three terms), and a combining mark joins two runs when accents are stripped but
    splits them when they are kept (``2\u1dc00``: one term or two). So a query counted one way
    could ask for hundreds of posting lists while declaring one. ASCII text reads the same under
    every normalisation; other text is counted under each of the four, and the largest is the bound.

    Example:
        >>> terms_bound("de_la_de la"), terms_bound("½½"), terms_bound("who directed heat")
        (4, 3, 3)
        >>> terms_bound("½\u1dc00")
        3
    """
    bound = len(_WORD.findall(text))
    if text.isascii():
        return max(bound, len(DEFAULT_TOKENIZER.words(text)))
    return max(bound, *(len(tokenizer.words(text)) for tokenizer in _EVERY_NORMALISATION))
