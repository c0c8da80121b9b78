"""Find HPO phenotype terms by label, synonym (lay synonyms included) or id.

Why: an agent reading "long slender fingers" must find HP:0001166
(Arachnodactyly) before it can rank diseases or ask the patient about it.
Matching is deterministic and explainable, in three tiers:

1. **id**: the text is an HPO id (alternative and obsolete ids are mapped to
   the current term, as :meth:`HpoKnowledgeBase.resolve_term` does);
2. **exact**: the normalised text (:func:`~agentenv.envs.rare_disease.tools.normalize.phrase_key`:
   case, accents, punctuation, plurals and small words folded) equals the
   normalised label or a synonym;
3. **words**: the label or a synonym contains every word of the text; failing
   that, as many words as any does (at least half of them).

Within the exact tier, labels come before EXACT synonyms before other
synonyms; within the word tiers, names with fewer extra words come first
(then labels before synonyms). Ties go to terms that annotate more diseases
(the commoner finding), then to the lower id. Only live terms under
'Phenotypic abnormality' (HP:0000118) are searched.

Example:
    >>> _rank_key("exact", "HP:0000002", kind=1, n_diseases=2, n_tokens=5)
    (0, 1, -2, 'HP:0000002')
    >>> _rank_key("all words", "HP:0000002", kind=1, n_diseases=2, n_tokens=5)
    (5, 1, -2, 'HP:0000002')
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.tools.normalize import phrase_key, phrase_tokens

_HPO_ID = re.compile(r"^\s*hp[:_]\d{7}\s*$", re.IGNORECASE)
_LABEL, _EXACT_SYNONYM, _OTHER_SYNONYM = 0, 1, 2


@dataclass(frozen=True)
class PhenotypeMatch:
    """One matched term: which name matched and how."""

    id: str
    label: str
    matched: str
    """The label or synonym that matched."""
    how: str
    """``"id"``, ``"exact"``, ``"all words"`` or ``"some words"``."""


def _rank_key(
    how: str, term: str, *, kind: int, n_diseases: int, n_tokens: int
) -> tuple[int, int, int, str]:
    return (0 if how == "exact" else n_tokens), kind, -n_diseases, term


class PhenotypeIndex:
    """Label/synonym index over the live phenotype terms of one KB (built once, read-only).

    Why this layout: flat lists and offset arrays (CSR) instead of dicts of
    sets, so that the index saves to one cache file and loads in a fraction of
    its build time (:mod:`~agentenv.envs.rare_disease.tools.search_indexes`), at
    ``make``, never inside a ``lookup_phenotype`` step. Entry ``e`` is one
    name of one term: ``terms[e]`` (term index), ``texts[e]`` (the name),
    ``kinds[e]`` (label, EXACT synonym, other synonym), ``n_tokens[e]``
    (distinct words). ``exact[key]`` and ``postings[word]`` are row numbers
    into the offset arrays that list entries.
    """

    STATE_VERSION = 1
    """Bump when the layout of :meth:`state` changes (it is part of the cache key)."""

    def __init__(self, kb: HpoKnowledgeBase, state: dict[str, Any]) -> None:
        self.kb = kb
        self.terms: list[int] = state["terms"]
        self.texts: list[str] = state["texts"]
        self.kinds: list[int] = state["kinds"]
        self.n_tokens: list[int] = state["n_tokens"]
        self._exact_keys: list[str] = state["exact_keys"]
        self._words: list[str] = state["words"]
        # Offsets and entries as int32 arrays (a query slices a few rows): as Python lists they held 8 MB.
        self._exact_ptr = np.asarray(state["exact_ptr"], dtype=np.int32)
        self._exact_entries = np.asarray(state["exact_entries"], dtype=np.int32)
        self._post_ptr = np.asarray(state["post_ptr"], dtype=np.int32)
        self._post_entries = np.asarray(state["post_entries"], dtype=np.int32)
        self._exact = {key: row for row, key in enumerate(self._exact_keys)}
        self._postings = {word: row for row, word in enumerate(self._words)}
        self._order = self._word_order()

    @classmethod
    def build(cls, kb: HpoKnowledgeBase) -> PhenotypeIndex:
        """Index every live phenotype term's label and synonyms (about 0.5 s for HPO 2025-01-16)."""
        ids = kb.graph.ids
        terms: list[int] = []
        texts: list[str] = []
        kinds: list[int] = []
        n_tokens: list[int] = []
        exact: dict[str, list[int]] = defaultdict(list)
        postings: dict[str, list[int]] = defaultdict(list)
        for t in kb.phenotype_mask.nonzero()[0].tolist():
            names = [(kb.term_names[t], _LABEL)]
            names += [
                (s.text, _EXACT_SYNONYM if s.scope == "EXACT" else _OTHER_SYNONYM)
                for s in kb.synonyms(ids[t])
            ]
            for text, kind in names:
                tokens = phrase_tokens(text)
                if not tokens:
                    continue
                e = len(terms)
                terms.append(t)
                texts.append(
                    " ".join(text.split())
                )  # one line: the cache file stores the names joined by newlines
                kinds.append(kind)
                n_tokens.append(len(set(tokens)))
                exact[" ".join(tokens)].append(e)
                for token in dict.fromkeys(tokens):
                    postings[token].append(e)
        exact_keys, exact_ptr, exact_entries = _flatten(exact)
        words, post_ptr, post_entries = _flatten(postings)
        return cls(
            kb,
            {
                "terms": terms,
                "texts": texts,
                "kinds": kinds,
                "n_tokens": n_tokens,
                "exact_keys": exact_keys,
                "exact_ptr": exact_ptr,
                "exact_entries": exact_entries,
                "words": words,
                "post_ptr": post_ptr,
                "post_entries": post_entries,
            },
        )

    def state(self) -> dict[str, Any]:
        """Everything :meth:`__init__` needs, as lists of ints and of one-line strings (for the cache)."""
        return {
            "terms": self.terms,
            "texts": self.texts,
            "kinds": self.kinds,
            "n_tokens": self.n_tokens,
            "exact_keys": self._exact_keys,
            "exact_ptr": self._exact_ptr.tolist(),
            "exact_entries": self._exact_entries.tolist(),
            "words": self._words,
            "post_ptr": self._post_ptr.tolist(),
            "post_entries": self._post_entries.tolist(),
        }

    def _exact_for(self, key: str) -> list[int]:
        row = self._exact.get(key)
        return (
            []
            if row is None
            else self._exact_entries[self._exact_ptr[row] : self._exact_ptr[row + 1]].tolist()
        )

    def _posting(self, word: str) -> np.ndarray:
        """The entries whose name has ``word``, ascending (empty when none)."""
        row = self._postings.get(word)
        return (
            self._post_entries[:0]
            if row is None
            else self._post_entries[self._post_ptr[row] : self._post_ptr[row + 1]]
        )

    def _word_order(self) -> np.ndarray:
        """Each entry's place in the word tiers' order: fewer words, label before synonyms, the commoner
        term (more diseases), the lower id, then the entry (:func:`_rank_key`); computed at load."""
        terms = np.asarray(self.terms, dtype=np.int64)
        id_rank = np.empty(len(self.kb.graph.ids), dtype=np.int64)
        id_rank[np.argsort(np.asarray(self.kb.graph.ids))] = np.arange(len(self.kb.graph.ids))
        by = np.lexsort(
            (
                np.arange(len(terms)),
                id_rank[terms],
                -self.kb.n_diseases[terms].astype(np.int64),
                np.asarray(self.kinds),
                np.asarray(self.n_tokens),
            )
        )
        order = np.empty(len(terms), dtype=np.int64)
        order[by] = np.arange(len(terms))
        return order

    def lookup(self, text: str, limit: int = 10) -> list[PhenotypeMatch]:
        """Up to ``limit`` terms for ``text``, best first (see the module docstring)."""
        kb = self.kb
        if _HPO_ID.match(text):
            term = kb.resolve_term(text)
            if term is None or not kb.phenotype_mask[kb.graph.index[term]]:
                return []
            return [PhenotypeMatch(term, kb.term_name(term), kb.term_name(term), "id")]
        tokens = set(phrase_tokens(text))
        if not tokens:
            return []
        out: dict[int, PhenotypeMatch] = {}
        self._add(out, self._exact_for(phrase_key(text)), "exact", limit)
        if len(out) < limit:
            postings = [self._posting(token) for token in sorted(tokens)]
            every = postings[0]
            for posting in postings[1:]:
                every = np.intersect1d(every, posting, assume_unique=True)
            self._add_ranked(out, every, "all words", limit)
            if not len(every) and len(out) < limit and len(tokens) > 1:
                entries, counts = np.unique(np.concatenate(postings), return_counts=True)
                best = int(counts.max()) if len(counts) else 0
                if best * 2 >= len(tokens):
                    self._add_ranked(out, entries[counts == best], "some words", limit)
        return list(out.values())

    def _add_ranked(
        self, out: dict[int, PhenotypeMatch], entries: np.ndarray, how: str, limit: int
    ) -> None:
        """:meth:`_add` for the word tiers, ordered by the precomputed :meth:`_word_order`."""
        kb, ids = self.kb, self.kb.graph.ids
        for e in entries[np.argsort(self._order[entries])].tolist():
            if len(out) >= limit:
                return
            t = self.terms[e]
            if t not in out:
                out[t] = PhenotypeMatch(ids[t], kb.term_names[t], self.texts[e], how)

    def _add(
        self, out: dict[int, PhenotypeMatch], entries: Iterable[int], how: str, limit: int
    ) -> None:
        kb, ids = self.kb, self.kb.graph.ids

        def key(e: int) -> tuple[tuple[int, int, int, str], int]:
            t = self.terms[e]
            rank = _rank_key(
                how,
                ids[t],
                kind=self.kinds[e],
                n_diseases=int(kb.n_diseases[t]),
                n_tokens=self.n_tokens[e],
            )
            return rank, e  # the entry number breaks ties: the order never depends on a set's

        for e in sorted(entries, key=key):
            if len(out) >= limit:
                return
            t = self.terms[e]
            if t not in out:
                out[t] = PhenotypeMatch(ids[t], kb.term_names[t], self.texts[e], how)


def _flatten(groups: dict[str, list[int]]) -> tuple[list[str], list[int], list[int]]:
    """``{key: entries}`` as keys, offsets and the entries laid end to end (CSR)."""
    keys, ptr, flat = list(groups), [0], []
    for key in keys:
        flat.extend(groups[key])
        ptr.append(len(flat))
    return keys, ptr, flat
