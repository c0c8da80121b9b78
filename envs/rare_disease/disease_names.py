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
5. **fuzzy**: difflib's ``SequenceMatcher.ratio`` of the normalised keys is at
   least :data:`FUZZY_THRESHOLD`, the numbers in both are the same (so
   "Retinitis pigmentosa 26" never becomes "... 25"), and no other disease
   scores as high. Candidates come from shared character trigrams.

A stage that matches several diseases makes the text *ambiguous*: it is not
resolved (8 OMIM names, e.g. "Nasopharyngeal carcinoma", are shared; use ids).

Example:
    >>> sorted(trigrams("marfan"))
    [' ma', 'an ', 'arf', 'fan', 'mar', 'rfa']
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from agentenv.corpora.hpo import HpoKnowledgeBase
from agentenv.envs.rare_disease.normalize import name_tokens, numbers

FUZZY_THRESHOLD = 0.9
"""Minimum ``SequenceMatcher.ratio`` between normalised keys for a fuzzy match.

0.9 accepts a typo or two in a typical name ("Marfan syndrom" -> Marfan
syndrome, 0.97; "Huntingtons disease", 0.97) and refuses a different disease
one letter away in a short name ("Lowry syndrome" vs "Lowe syndrome", 0.89).
Names that differ only in a number are kept apart by the number rule."""
FUZZY_CANDIDATES = 30
"""Keys ranked by trigram overlap that go on to the (slower) difflib ratio."""
MIN_FUZZY_LENGTH = 6
"""Shorter normalised texts are never matched fuzzily (too little signal)."""


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

    def resolve(self, text: str, *, fuzzy: bool = True) -> NameMatch:
        """Resolve one disease name (see the module docstring for the stages)."""
        text = text.strip()
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
            return self._fuzzy(" ".join(tokens))
        return NameMatch(None, "unresolved")

    def _fuzzy(self, key: str) -> NameMatch:
        if len(key) < MIN_FUZZY_LENGTH:
            return NameMatch(None, "unresolved")
        grams = [self._gram_postings[g] for g in trigrams(key) if g in self._gram_postings]
        if not grams:
            return NameMatch(None, "unresolved")
        shared = np.bincount(np.concatenate(grams), minlength=len(self._keys))
        dice = 2.0 * shared / (self._gram_counts + len(trigrams(key)))
        top = np.argsort(-dice, kind="stable")[:FUZZY_CANDIDATES]
        wanted = numbers(key)
        best, best_ids = 0.0, set()
        for i in top.tolist():
            candidate = self._keys[i]
            if dice[i] == 0 or numbers(candidate) != wanted:
                continue
            ratio = difflib.SequenceMatcher(None, key, candidate, autojunk=False).ratio()
            if ratio > best:
                best, best_ids = ratio, set(self._normal[candidate])
            elif ratio == best:
                best_ids |= self._normal[candidate]
        if best < FUZZY_THRESHOLD:
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
