"""Deterministic hashed n-gram text features for comparing two task sets (``agentenv data shift-check``).

Each text becomes a sparse vector of fixed dimension (``2**12`` by default):
character 3-5 grams of the lower-cased text (padded with a space at each end,
so word starts and ends count) and word unigrams, each hashed into a bucket
with a sign (the hashing trick), weighted by sublinear term frequency
``1 + log(tf)`` times a smoothed inverse document frequency, and L2-normalised.

Why these features and not a neural sentence encoder:

* no model weights may be fetched at run time (the check must run offline, in
  CI, on a laptop), and none ship with the package;
* they are cheap: 2,000 prompts embed in a fraction of a second on one core;
* they are deterministic: the hash is BLAKE2b of the n-gram's UTF-8 bytes, not
  Python's salted ``hash()``, so the same texts give the same vectors in every
  process and on every machine;
* prompt templates, entity names, numbers and question words (what separates
  one task kind or generator from another) are exactly what character and
  word n-grams see.

The IDF is fitted on the texts given to :meth:`HashedNgramEmbedder.fit`; the
shift check fits it on A and B pooled (no labels are used, so it leaks nothing
to the classifier about which set a row came from).

Example:
    >>> emb = HashedNgramEmbedder(dim=256).fit(["Who directed Alien?", "Who wrote Alien?"])
    >>> X = emb.transform(["Who directed Alien?"])
    >>> X.shape, round(float(X.multiply(X).sum()), 6)
    ((1, 256), 1.0)
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

__all__ = ["HashedNgramEmbedder", "embed_texts"]

_WORD = re.compile(r"\w+", re.UNICODE)
_SPACES = re.compile(r"\s+")


@dataclass
class HashedNgramEmbedder:
    """Hashed character n-gram + word unigram TF-IDF features, L2-normalised rows.

    Args:
        dim: number of hash buckets (the vector dimension).
        char_ngrams: smallest and largest character n-gram length.
        words: also hash word unigrams (prefixed, so ``"the"`` the word and
            ``"the"`` the trigram are different features).
    """

    dim: int = 2**12
    char_ngrams: tuple[int, int] = (3, 5)
    words: bool = True
    idf: np.ndarray | None = field(default=None, repr=False)
    _cache: dict[str, tuple[int, float]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.dim < 2:
            raise ValueError(f"dim must be at least 2, got {self.dim}")
        lo, hi = self.char_ngrams
        if not 1 <= lo <= hi:
            raise ValueError(
                f"char_ngrams must be (lo, hi) with 1 <= lo <= hi, got {self.char_ngrams}"
            )

    def _features(self, text: str) -> list[str]:
        lowered = _SPACES.sub(" ", text.lower()).strip()
        padded = f" {lowered} "
        lo, hi = self.char_ngrams
        grams = [padded[i : i + n] for n in range(lo, hi + 1) for i in range(len(padded) - n + 1)]
        if self.words:
            grams.extend("w:" + w for w in _WORD.findall(lowered))
        return grams

    def _bucket(self, gram: str) -> tuple[int, float]:
        hit = self._cache.get(gram)
        if hit is None:
            h = int.from_bytes(
                hashlib.blake2b(gram.encode("utf-8"), digest_size=8).digest(), "little"
            )
            hit = (h % self.dim, 1.0 if (h >> 63) & 1 else -1.0)
            self._cache[gram] = hit
        return hit

    def _signed_tf(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """``sign * (1 + log tf)`` per (text, bucket); colliding n-grams add their signed weights."""
        rows: list[int] = []
        cols: list[int] = []
        signs: list[float] = []
        counts: list[int] = []
        cache, bucket = self._cache, self._bucket
        for r, text in enumerate(texts):
            for gram, count in Counter(self._features(text)).items():
                b, sign = cache.get(gram) or bucket(gram)
                rows.append(r)
                cols.append(b)
                signs.append(sign)
                counts.append(count)
        vals = np.asarray(signs) * (1.0 + np.log(np.asarray(counts, dtype=np.float64)))
        m = sparse.csr_matrix(
            (vals, (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))),
            shape=(len(texts), self.dim),
        )
        m.sum_duplicates()
        return m

    def _fit_tf(self, tf: sparse.csr_matrix) -> None:
        df = np.bincount(tf.indices, minlength=self.dim).astype(np.float64)
        n = float(tf.shape[0])
        self.idf = np.log((1.0 + n) / (1.0 + df)) + 1.0

    def _weight(self, tf: sparse.csr_matrix) -> sparse.csr_matrix:
        assert self.idf is not None
        m = tf.multiply(self.idf[np.newaxis, :]).tocsr()
        norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sparse.csr_matrix(sparse.diags(1.0 / norms) @ m)

    def fit(self, texts: Sequence[str]) -> HashedNgramEmbedder:
        """Fit the smoothed IDF ``log((1 + n) / (1 + df)) + 1`` of each bucket on ``texts``."""
        self._fit_tf(self._signed_tf(texts))
        return self

    def transform(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """The L2-normalised feature rows of ``texts`` (a ``len(texts) x dim`` CSR matrix)."""
        if self.idf is None:
            raise RuntimeError("call fit() before transform()")
        return self._weight(self._signed_tf(texts))

    def fit_transform(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """:meth:`fit` then :meth:`transform` on the same texts (the n-grams are counted once)."""
        tf = self._signed_tf(texts)
        self._fit_tf(tf)
        return self._weight(tf)


def embed_texts(texts: Sequence[str], *, dim: int = 2**12) -> sparse.csr_matrix:
    """Fit the IDF on ``texts`` and return their L2-normalised rows.

    Example:
        >>> embed_texts(["a b c", "a b d"], dim=64).shape
        (2, 64)
    """
    return HashedNgramEmbedder(dim=dim).fit_transform(texts)
