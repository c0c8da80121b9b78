"""Disease names an answer may write: the catalog's names and synonyms, spelled by the benign rules.

Why no typo tolerance: a name that is one edit from the gold is often another
disease ("Hyperthyroidism, congenital, nongoitrous, 4" for hypothyroidism,
"CFHR6" for "CFHR5"). So a name resolves only through these tiers, in order;
the first tier that matches anything decides:

1. **exact**: the words of a primary name or a listed synonym, spelled under
   :mod:`agentenv.engine.spelling` (case, NFKC, hyphen = space, possessive ``'s``,
   punctuation the name has may be left out, accents may be left out);
2. **numeral**: the same, after :func:`numeral_rule` on both sides: ``type 2``
   = ``2`` = ``II`` (``Neurofibromatosis type 2`` = ``Neurofibromatosis, type II``).
   A Roman numeral is read as a number only after ``type`` or as the last
   word, so the X of ``X-linked`` stays a letter.

A tier that matches several diseases makes the name *ambiguous* unless one of
them is spelled with exactly the marks written (8 OMIM names, e.g.
"Nasopharyngeal carcinoma", are shared: answer with the id).

Example:
    >>> numeral_rule(["neurofibromatosis", "type", "ii"])
    ['neurofibromatosis', None, '2']
    >>> numeral_rule(["lissencephaly", "2", "x", "linked"])
    ['lissencephaly', '2', 'x', 'linked']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.engine.spelling import SpellingIndex
from agentenv.engine.spelling_cache import cached_spelling_index

MAX_NAME_CHARS = 400
"""Longer entries are never names (the longest OMIM name or synonym has 145 characters)."""

_ROMAN = re.compile(r"(x{0,3})(ix|iv|v?i{0,3})")
_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10}
_NUMBER = re.compile(r"[0-9]{1,3}[a-z]?")


def roman_to_int(token: str) -> int | None:
    """The value of a lower-case Roman numeral up to 39, else None.

    Example:
        >>> roman_to_int("iv"), roman_to_int("xii"), roman_to_int("mix"), roman_to_int("")
        (4, 12, None, None)
    """
    if not token or not _ROMAN.fullmatch(token):
        return None
    total = 0
    for i, c in enumerate(token):
        value = _ROMAN_VALUES[c]
        following = _ROMAN_VALUES[token[i + 1]] if i + 1 < len(token) else 0
        total += -value if value < following else value
    return total


def numeral_rule(words: Sequence[str]) -> list[str | None]:
    """``type N`` → ``N``, and a Roman numeral after ``type`` or at the end → its digits (see the module)."""
    out: list[str | None] = []
    last = len(words) - 1
    for i, word in enumerate(words):
        following = words[i + 1] if i < last else ""
        if word == "type" and (_NUMBER.fullmatch(following) or roman_to_int(following) is not None):
            out.append(None)
            continue
        value = roman_to_int(word) if (i == last or (i > 0 and words[i - 1] == "type")) else None
        out.append(str(value) if value is not None else word)
    return out


NAME_RULES = (("numeral", numeral_rule),)
NAME_RULES_VERSION = "disease-names-1"
"""Bump when :func:`numeral_rule` or the names indexed change."""


@lru_cache(maxsize=4)
def disease_spelling_index(kb: HpoKnowledgeBase) -> SpellingIndex:
    """The name index of a KB's universe, from the disk cache (or built), shared by every env of the process."""

    def build() -> SpellingIndex:
        names = ((did, name) for did in kb.disease_ids for name in kb.disease_names(did))
        return SpellingIndex(names, rules=NAME_RULES)

    return cached_spelling_index(
        f"diseases-{kb.universe}", kb.checksum, NAME_RULES_VERSION, build, NAME_RULES
    )
