"""Text normalisation shared by disease-name resolution and phenotype lookup.

Why one module: an agent writes "Neurofibromatosis type 2" where OMIM says
"Neurofibromatosis, type II", and "seizures" where HPO says "Seizure". The
same folding (case, accents, punctuation, possessives, Roman numerals) must
apply to the index side and the query side, or matches depend on which side
was normalised how.

Example:
    >>> normalize_name("Neurofibromatosis, type II")
    'neurofibromatosis 2'
    >>> normalize_name("neurofibromatosis type 2")
    'neurofibromatosis 2'
    >>> normalize_name("Alzheimer's disease"), normalize_name("Sjögren syndrome")
    ('alzheimer disease', 'sjogren syndrome')
    >>> phrase_key("Seizures of the eyes")
    'seizure eye'
"""

from __future__ import annotations

import re
import unicodedata

_POSSESSIVE = re.compile(r"['’]s\b")
_NON_WORD = re.compile(r"[^0-9a-z]+")
_ROMAN = re.compile(r"^(x{0,3})(ix|iv|v?i{0,3})$")
_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10}
NAME_STOPWORDS = frozenset({"the", "type"})
"""Dropped from disease names: "Spherocytosis, type 2" and "Spherocytosis 2" are one name."""
PHRASE_STOPWORDS = frozenset(
    {"a", "an", "the", "of", "in", "on", "to", "and", "or", "with", "for", "at", "by"}
)
"""Dropped from phenotype phrases before matching words."""


def fold(text: str) -> list[str]:
    """Lower-case ASCII word tokens: accents stripped, possessive 's dropped, punctuation splits."""
    text = unicodedata.normalize("NFKD", _POSSESSIVE.sub("", text))
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold()
    return _NON_WORD.sub(" ", text).split()


def roman_to_int(token: str) -> int | None:
    """The value of a lower-case Roman numeral up to 39, else None.

    Example:
        >>> roman_to_int("iv"), roman_to_int("xii"), roman_to_int("mix"), roman_to_int("")
        (4, 12, None, None)
    """
    if not token or not _ROMAN.match(token):
        return None
    total = 0
    for i, c in enumerate(token):
        value = _ROMAN_VALUES[c]
        following = _ROMAN_VALUES[token[i + 1]] if i + 1 < len(token) else 0
        total += -value if value < following else value
    return total


def name_tokens(text: str) -> list[str]:
    """Disease-name tokens: folded, Roman numerals as digits, :data:`NAME_STOPWORDS` dropped."""
    out = []
    for token in fold(text):
        if token in NAME_STOPWORDS:
            continue
        value = roman_to_int(token)
        out.append(str(value) if value is not None else token)
    return out


def normalize_name(text: str) -> str:
    """The normalised key of a disease name (see :func:`name_tokens`)."""
    return " ".join(name_tokens(text))


def stem(token: str) -> str:
    """A light plural stemmer: 'abnormalities' -> 'abnormality', 'seizures' -> 'seizure'.

    Example:
        >>> [stem(t) for t in ("abnormalities", "seizures", "glasses", "fits", "uterus", "iris")]
        ['abnormality', 'seizure', 'glass', 'fit', 'uterus', 'iris']
    """
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if token.endswith("sses"):
        return token[:-2]
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


def phrase_tokens(text: str) -> list[str]:
    """Phenotype-phrase tokens: folded, stemmed, :data:`PHRASE_STOPWORDS` dropped."""
    return [stem(t) for t in fold(text) if t not in PHRASE_STOPWORDS]


def phrase_key(text: str) -> str:
    """The normalised key of a phenotype label or phrase."""
    return " ".join(phrase_tokens(text))
