"""Find HPO phenotype terms by label, synonym (lay synonyms included) or id.

Why: an agent reading "long slender fingers" must find HP:0001166
(Arachnodactyly) before it can rank diseases or ask the patient about it.
Matching is deterministic and explainable, in three tiers:

1. **id**: the text is an HPO id (alternative and obsolete ids are mapped to
   the current term, as :meth:`HpoKnowledgeBase.resolve_term` does);
2. **exact**: the normalised text (:func:`~agentenv.envs.rare_disease.normalize.phrase_key`:
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
from functools import lru_cache

from agentenv.corpora.hpo import HpoKnowledgeBase
from agentenv.envs.rare_disease.normalize import phrase_key, phrase_tokens

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


def _rank_key(how: str, term: str, *, kind: int, n_diseases: int, n_tokens: int) -> tuple[int, int, int, str]:
    return (0 if how == "exact" else n_tokens), kind, -n_diseases, term


class PhenotypeIndex:
    """Label/synonym index over the live phenotype terms of one KB (built once, read-only)."""

    def __init__(self, kb: HpoKnowledgeBase) -> None:
        self.kb = kb
        ids = kb.graph.ids
        self._names: list[tuple[int, str, int]] = []  # (term index, text, kind)
        self._exact: dict[str, list[int]] = defaultdict(list)
        self._postings: dict[str, set[int]] = defaultdict(set)
        self._n_tokens: list[int] = []
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
                e = len(self._names)
                self._names.append((t, text, kind))
                self._n_tokens.append(len(set(tokens)))
                self._exact[" ".join(tokens)].append(e)
                for token in set(tokens):
                    self._postings[token].add(e)

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
        self._add(out, self._exact.get(phrase_key(text), []), "exact", limit)
        if len(out) < limit:
            postings = [self._postings.get(token, set()) for token in tokens]
            every = set.intersection(*postings) if all(postings) else set()
            self._add(out, every, "all words", limit)
            if not every and len(out) < limit and len(tokens) > 1:
                counts: dict[int, int] = defaultdict(int)
                for posting in postings:
                    for e in posting:
                        counts[e] += 1
                best = max(counts.values(), default=0)
                if best * 2 >= len(tokens):
                    self._add(out, [e for e, c in counts.items() if c == best], "some words", limit)
        return list(out.values())

    def _add(self, out: dict[int, PhenotypeMatch], entries: Iterable[int], how: str, limit: int) -> None:
        kb, ids = self.kb, self.kb.graph.ids

        def key(e: int) -> tuple[int, int, int, str]:
            t, _, kind = self._names[e]
            return _rank_key(how, ids[t], kind=kind, n_diseases=int(kb.n_diseases[t]), n_tokens=self._n_tokens[e])

        for e in sorted(entries, key=key):
            if len(out) >= limit:
                return
            t, text, _ = self._names[e]
            if t not in out:
                out[t] = PhenotypeMatch(ids[t], kb.term_names[t], text, how)


@lru_cache(maxsize=4)
def phenotype_index(kb: HpoKnowledgeBase) -> PhenotypeIndex:
    """The index of a KB, built on first use and shared by every env of the process."""
    return PhenotypeIndex(kb)
