"""Character n-gram TF-IDF retrieval: finds names typed loosely or misspelt.

BM25 matches whole words, so *pheonix* misses *Phoenix*, and an encoder of
word pieces reads a misspelt name as other words. The character trigrams of
two spellings mostly agree, so a cosine over trigram TF-IDF rows ranks the
intended name near the top (the idea of fuzzy name matching; e.g. Manning,
Raghavan & Schütze, *Introduction to Information Retrieval*, 3.3.4).

Texts are lower-cased, cut to letters and digits, and each word is wrapped
in spaces before its trigrams are taken, so word starts and ends count.
A trigram the corpus never has is ignored; rows are TF-IDF (log-scaled term
frequency, smoothed IDF) of unit length; ties go to the lower row.

Example:
    >>> r = CharNgramRetriever.from_texts(["The Order of the Phoenix", "Juno", "Jaws"])
    >>> [h.doc_id for h in r.search("order of the pheonix", 2)]
    ['0']
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import numpy as np

from agentenv.retrieval.base import Hit, document_ids
from agentenv.retrieval.topk import top_k_rows

__all__ = ["CharNgramRetriever", "char_ngrams"]

_NON_WORD = re.compile(r"[^0-9a-z]+")


def char_ngrams(text: str, n: int = 3) -> list[str]:
    """The ``n``-grams of each word of ``text`` wrapped in spaces (accents and case dropped).

    Example:
        >>> char_ngrams("Jaws!")
        [' ja', 'jaw', 'aws', 'ws ']
    """
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    grams = []
    for word in _NON_WORD.sub(" ", folded).split():
        wrapped = f" {word} "
        grams.extend(wrapped[i : i + n] for i in range(len(wrapped) - n + 1))
    return grams


class CharNgramRetriever:
    """Cosine over character-trigram TF-IDF rows of a fixed corpus (scipy sparse; built in seconds)."""

    kind = "char-ngrams"

    def __init__(self, ids: list[str], vocabulary: dict[str, int], idf: np.ndarray, postings):  # type: ignore[no-untyped-def]
        self.ids = ids
        self.vocabulary = vocabulary
        self.idf = idf
        self.postings = postings  # (n_grams, n_docs) CSR: a gram's row lists its documents

    @classmethod
    def from_texts(
        cls, texts: Sequence[str], ids: Sequence[str] | None = None
    ) -> CharNgramRetriever:
        """Index ``texts`` (typically short: titles, names)."""
        from scipy import sparse

        doc_ids = document_ids(None if ids is None else list(ids), len(texts))
        vocabulary: dict[str, int] = {}
        rows, cols, counts = [], [], []
        for d, text in enumerate(texts):
            grams: dict[int, int] = {}
            for g in char_ngrams(text):
                col = vocabulary.setdefault(g, len(vocabulary))
                grams[col] = grams.get(col, 0) + 1
            rows.extend([d] * len(grams))
            cols.extend(grams)
            counts.extend(grams.values())
        shape = (len(texts), max(len(vocabulary), 1))
        m = sparse.csr_matrix(
            (1.0 + np.log(np.asarray(counts, dtype=np.float64)), (rows, cols)), shape=shape
        )
        df = np.bincount(np.asarray(cols, dtype=np.int64), minlength=shape[1])
        idf = np.log((1.0 + len(texts)) / (1.0 + df)) + 1.0
        m = m.multiply(idf[None, :]).tocsr()
        norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        m = sparse.diags(1.0 / norms) @ m
        return cls(doc_ids, vocabulary, idf, m.T.tocsr())

    def _query_vector(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        grams: dict[int, int] = {}
        for g in char_ngrams(query):
            col = self.vocabulary.get(g)
            if col is not None:
                grams[col] = grams.get(col, 0) + 1
        cols = np.fromiter(grams, dtype=np.int64, count=len(grams))
        vals = (1.0 + np.log(np.fromiter(grams.values(), dtype=np.float64))) * self.idf[cols]
        return cols, vals / max(float(np.sqrt(vals @ vals)), 1e-12)

    def search(self, query: str, k: int) -> list[Hit]:
        """Top ``k`` documents by cosine similarity of trigram TF-IDF rows (documents sharing no trigram are left out)."""
        if k <= 0:
            return []
        cols, vals = self._query_vector(query)
        if cols.shape[0] == 0:
            return []
        scores = self.postings[cols].T @ vals  # (n_docs,) dense
        rows = np.flatnonzero(scores > 0)
        top, best = top_k_rows(rows, scores[rows], k)
        ids = self.ids
        return [
            Hit(ids[r], s, i)
            for i, (r, s) in enumerate(zip(top.tolist(), best.tolist(), strict=True))
        ]

    def search_batch(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        """:meth:`search` for each query."""
        return [self.search(q, k) for q in queries]

    def __repr__(self) -> str:
        return f"CharNgramRetriever(n_docs={len(self.ids)}, n_grams={len(self.vocabulary)})"
