"""Resolve a disease written as a name or an id to one disease of the universe, or to nothing.

Why so careful: a name the resolver *guesses* would grade an answer the agent
did not give. So a name resolves only when one disease fits, through these
stages in order; the first stage with a match decides:

1. **exact**: the text equals a primary name;
2. **synonym**: the text equals a synonym (case ignored);
3. **normalised**: the :func:`~agentenv.envs.rare_disease.normalize.normalize_name`
   keys are equal (case, accents, punctuation, possessives, Roman numerals,
   the word "type": "Neurofibromatosis type 2" = "Neurofibromatosis, type II");
4. **reordered**: the same words in another order ("Imperforate anus" =
   "Anus, imperforate");
5. **fuzzy** (typos only): the text has exactly as many words as a name,
   every word pairs up in order with that name's word, and each pair is equal
   or one spelling slip apart (see :func:`word_edits`: one edit for a word of
   :data:`MIN_TYPO_WORD` letters or more, two from :data:`TWO_TYPO_WORD`); at
   most :data:`MAX_TYPO_EDITS` edits in all; numbers are never edited (so
   "Retinitis pigmentosa 26" never becomes "... 25"); and no other disease is
   as close. Since words pair one to one, an extra word is never absorbed by a
   long name ("not Lowe syndrome" stays unresolved), and a short name never
   hides inside a longer text ("Lowe syndrome or Marfan syndrome" too).
   Candidates come from shared character trigrams.

A stage that matches several diseases makes the text *ambiguous*: it is not
resolved (8 OMIM names, e.g. "Nasopharyngeal carcinoma", are shared; use ids).

Texts longer than :data:`MAX_NAME_CHARS` are never names: resolution is
linear in the text and bounded however long an answer is.

Example:
    >>> sorted(trigrams("marfan"))
    [' ma', 'an ', 'arf', 'fan', 'mar', 'rfa']
    >>> word_edits("syndrom", "syndrome", 1), word_edits("lowry", "lowe", 1), word_edits("marfna", "marfan", 1)
    (1, None, 1)
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from agentenv.corpora.hpo import HpoKnowledgeBase
from agentenv.envs.rare_disease.normalize import name_tokens

FUZZY_CANDIDATES = 50
"""Names ranked by trigram overlap (among those with as many words) that go on to the word-by-word check."""
MIN_FUZZY_LENGTH = 6
"""Shorter normalised texts are never matched fuzzily (too little signal)."""
MIN_TYPO_WORD = 5
"""Words shorter than this must be spelled exactly: "Lowe" and "Lowry" are different diseases' names."""
TWO_TYPO_WORD = 10
"""Words this long may carry two edits ("mucopolysacharidosis")."""
MAX_TYPO_EDITS = 2
"""Edits allowed over the whole name."""
MAX_NAME_CHARS = 400
"""Longer texts are not names (the longest OMIM name or synonym has 145 characters)."""


def word_edits(written: str, name_word: str, limit: int) -> int | None:
    """Edits (insert, delete, substitute, swap two neighbours) from one word to another, if at most ``limit``.

    Why a bounded check: a typo is one slip, so anything beyond ``limit`` is a
    different word; the band makes the cost linear in the word length.
    """
    if abs(len(written) - len(name_word)) > limit:
        return None
    if written == name_word:
        return 0
    if limit == 1:
        return 1 if _one_edit_apart(written, name_word) else None
    previous_row: list[int] | None = None
    row = list(range(len(name_word) + 1))
    for i in range(1, len(written) + 1):
        current = [i] + [0] * len(name_word)
        for j in range(1, len(name_word) + 1):
            cost = written[i - 1] != name_word[j - 1]
            best = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            if (
                previous_row is not None and i > 1 and j > 1
                and written[i - 1] == name_word[j - 2] and written[i - 2] == name_word[j - 1]
            ):
                best = min(best, previous_row[j - 2] + 1)
            current[j] = best
        if min(current) > limit:
            return None
        previous_row, row = row, current
    return row[-1] if row[-1] <= limit else None


def _one_edit_apart(a: str, b: str) -> bool:
    """Whether two different words are one insert, delete, substitution or neighbour swap apart (linear)."""
    if len(a) < len(b):
        a, b = b, a
    start = 0
    while start < len(b) and a[start] == b[start]:
        start += 1
    if len(a) == len(b):
        rest = start + 1
        if a[rest:] == b[rest:]:
            return True
        return start + 1 < len(a) and a[start] == b[start + 1] and a[start + 1] == b[start] and a[start + 2 :] == b[start + 2 :]
    return len(a) == len(b) + 1 and a[start + 1 :] == b[start:]


def typo_edits(written: list[str], name: list[str]) -> int | None:
    """Total edits when ``written`` is ``name`` with typos only (see stage 5), else None.

    Example:
        >>> typo_edits(["marfan", "syndrom"], ["marfan", "syndrome"])
        1
        >>> typo_edits(["not", "marfan", "syndrome"], ["marfan", "syndrome"]) is None
        True
        >>> typo_edits(["retinitis", "pigmentosa", "26"], ["retinitis", "pigmentosa", "25"]) is None
        True
    """
    if len(written) != len(name):
        return None
    slips = []
    for got, want in zip(written, name, strict=True):
        if got != want:
            if got.isdigit() or want.isdigit() or len(want) < MIN_TYPO_WORD:
                return None
            slips.append((got, want))
    if len(slips) > MAX_TYPO_EDITS:
        return None
    total = 0
    for got, want in slips:
        edits = word_edits(got, want, min(2 if len(want) >= TWO_TYPO_WORD else 1, MAX_TYPO_EDITS - total))
        if edits is None:
            return None
        total += edits
    return total


def trigrams(key: str) -> set[str]:
    """Character trigrams of a key padded with one space on each side."""
    padded = f" {key} "
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


@dataclass(frozen=True)
class NameMatch:
    """The outcome of resolving one text: the disease (None if unresolved) and the stage."""

    disease_id: str | None
    how: str
    """``exact``, ``synonym``, ``normalised``, ``reordered``, ``fuzzy``, ``ambiguous`` or ``unresolved``."""


class DiseaseNameIndex:
    """Name lookups over one KB's universe (built once per KB, read-only)."""

    def __init__(self, kb: HpoKnowledgeBase) -> None:
        self.kb = kb
        self._exact: dict[str, set[str]] = defaultdict(set)
        self._synonym: dict[str, set[str]] = defaultdict(set)
        self._normal: dict[str, set[str]] = defaultdict(set)
        self._bag: dict[str, set[str]] = defaultdict(set)
        for did in kb.disease_ids:
            info = kb.disease(did)
            self._exact[info.name].add(did)
            for name in (info.name, *info.synonyms):
                self._synonym[name.casefold()].add(did)
                tokens = name_tokens(name)
                self._normal[" ".join(tokens)].add(did)
                self._bag[" ".join(sorted(tokens))].add(did)
        self._keys = sorted(k for k in self._normal if k)
        postings: dict[str, list[int]] = defaultdict(list)
        for i, key in enumerate(self._keys):
            for gram in trigrams(key):
                postings[gram].append(i)
        self._gram_postings = {g: np.asarray(v, dtype=np.int32) for g, v in postings.items()}
        self._gram_counts = np.asarray([len(trigrams(k)) for k in self._keys], dtype=np.int32)
        self._word_counts = np.asarray([len(k.split()) for k in self._keys], dtype=np.int32)
        self._max_key_chars = max(map(len, self._keys), default=0)

    def resolve(self, text: str, *, fuzzy: bool = True) -> NameMatch:
        """Resolve one disease name (see the module docstring for the stages)."""
        text = text.strip()
        if len(text) > MAX_NAME_CHARS:
            return NameMatch(None, "unresolved")
        tokens = name_tokens(text)
        stages = (
            ("exact", self._exact.get(text)),
            ("synonym", self._synonym.get(text.casefold())),
            ("normalised", self._normal.get(" ".join(tokens))),
            ("reordered", self._bag.get(" ".join(sorted(tokens)))),
        )
        for how, found in stages:
            if found:
                return _one(found, how)
        if fuzzy:
            return self._fuzzy(tokens)
        return NameMatch(None, "unresolved")

    def _fuzzy(self, tokens: list[str]) -> NameMatch:
        key = " ".join(tokens)
        if not MIN_FUZZY_LENGTH <= len(key) <= self._max_key_chars + MAX_TYPO_EDITS:
            return NameMatch(None, "unresolved")
        key_grams = trigrams(key)
        grams = [self._gram_postings[g] for g in key_grams if g in self._gram_postings]
        if not grams:
            return NameMatch(None, "unresolved")
        shared = np.bincount(np.concatenate(grams), minlength=len(self._keys))
        dice = 2.0 * shared / (self._gram_counts + len(key_grams))
        dice[self._word_counts != len(tokens)] = 0.0
        if len(dice) > FUZZY_CANDIDATES:
            shortlist = np.argpartition(-dice, FUZZY_CANDIDATES)[:FUZZY_CANDIDATES]
            top = shortlist[np.lexsort((shortlist, -dice[shortlist]))]
        else:
            top = np.argsort(-dice, kind="stable")
        best, best_ids = MAX_TYPO_EDITS + 1, set()
        for i in top.tolist():
            if dice[i] == 0:
                break
            candidate = self._keys[i]
            edits = typo_edits(tokens, candidate.split())
            if edits is None:
                continue
            if edits < best:
                best, best_ids = edits, set(self._normal[candidate])
            elif edits == best:
                best_ids |= self._normal[candidate]
        if not best_ids:
            return NameMatch(None, "unresolved")
        return _one(best_ids, "fuzzy")


def _one(found: set[str], how: str) -> NameMatch:
    if len(found) == 1:
        return NameMatch(next(iter(found)), how)
    return NameMatch(None, "ambiguous")


@lru_cache(maxsize=4)
def disease_name_index(kb: HpoKnowledgeBase) -> DiseaseNameIndex:
    """The index of a KB, built on first use and shared by every env of the process."""
    return DiseaseNameIndex(kb)
